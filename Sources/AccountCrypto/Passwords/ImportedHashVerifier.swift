package import AccountCore
import Crypto
import Foundation
import _CryptoExtras

/// Verifies passwords against hashes imported with `accounts:batchCreate`: every algorithm the Admin SDK offers
/// (`SCRYPT`, `STANDARD_SCRYPT`, `BCRYPT`, `PBKDF2_SHA256`, `PBKDF_SHA1`, the `HMAC_*` and plain-digest families,
/// `ARGON2`), so imported users can sign in and be upgraded to argon2id. Synchronous and CPU-heavy (Firebase's scrypt
/// is 16 MiB and tens of milliseconds): callers run it on a thread pool.
package enum ImportedHashVerifier {
    /// The algorithm names an import may use.
    package static let supportedAlgorithms: Set<String> = [
        "SCRYPT", "STANDARD_SCRYPT", "BCRYPT", "PBKDF2_SHA256", "PBKDF_SHA1", "HMAC_SHA512", "HMAC_SHA256", "HMAC_SHA1",
        "HMAC_MD5", "SHA512", "SHA256", "SHA1", "MD5", "ARGON2",
    ]

    /// Whether `password` matches the imported `stored` credential. An unknown algorithm, parameters outside today's
    /// bounds (a hash imported before decision 16 bounded them) or a hash that would cost more than they allow are
    /// `false`: such a user resets the password, and no guess costs more than a few native verifications.
    package static func verify(_ password: String, against stored: StoredPassword) throws -> Bool {
        guard supportedAlgorithms.contains(stored.algorithm),
            let scheme = try? Scheme(algorithm: stored.algorithm, parameters: stored.parameters), userFault(stored, scheme) == nil
        else { return false }
        let password = Array(password.utf8)
        // The separator is appended to every algorithm's salt (Firebase CLI: "optional for all algorithms").
        let salt = (stored.salt ?? []) + scheme.saltSeparator
        switch scheme.kind {
        case .firebaseScrypt(let signerKey, let rounds, let memoryCost):
            guard stored.hash.count == signerKey.count else { return false }
            let key = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: 64, rounds: 1 << memoryCost, blockSize: rounds, parallelism: 1
            )
            let cipherKey = key.withUnsafeBytes { SymmetricKey(data: Array($0.prefix(32))) }
            let nonce = try AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16))
            let derived = try AES._CTR.encrypt(signerKey, using: cipherKey, nonce: nonce)
            return ConstantTime.equal(Array(derived), stored.hash)
        case .standardScrypt(let cpuMemCost, let blockSize, let parallelization, let derivedKeyLength):
            guard stored.hash.count == derivedKeyLength else { return false }
            let key = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: derivedKeyLength, rounds: cpuMemCost, blockSize: blockSize,
                parallelism: parallelization
            )
            return key.withUnsafeBytes { ConstantTime.equal(Array($0), stored.hash) }
        case .bcrypt:
            return BCrypt.verify(password, hash: stored.hash)
        case .pbkdf2(let function, let rounds):
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: function == .sha1 ? .insecureSHA1 : .sha256,
                outputByteCount: stored.hash.count, unsafeUncheckedRounds: rounds
            )
            return key.withUnsafeBytes { ConstantTime.equal(Array($0), stored.hash) }
        case .hmac(let function, let signerKey, let saltFirst):
            let message = saltFirst ? salt + password : password + salt
            return ConstantTime.equal(function.hmac(message, key: signerKey), stored.hash)
        case .digest(let function, let rounds, let passwordFirst):
            var digest = function.digest(passwordFirst ? password + salt : salt + password)
            for _ in 1..<max(rounds, 1) { digest = function.digest(digest) }
            return ConstantTime.equal(digest, stored.hash)
        case .argon2(let argon2):
            guard let derived = argon2.derive(password: password, salt: salt) else { return false }
            return ConstantTime.equal(derived, stored.hash)
        }
    }

    /// Checks an import's `hashAlgorithm` and parameters, throwing Firebase's name for the first fault in the
    /// reference's order: `INVALID_HASH_ALGORITHM`, `INVALID_HASH_ROUNDS`, `INVALID_HASH_MEMORY_COST`,
    /// `INVALID_HASH_KEY`, `INVALID_HASH_SALT_SEPARATOR`, `INVALID_HASH_CPU_MEM_COST`, `INVALID_HASH_BLOCK_SIZE`,
    /// `INVALID_HASH_PARALLELIZATION`, `INVALID_HASH_DERIVED_KEY_LENGTH`. Byte parameters (`signerKey`,
    /// `saltSeparator`) are standard or URL-safe base64, padded or not; numbers are decimal strings.
    package static func validateParameters(algorithm: String, parameters: [String: String]) throws(ImportParameterError) {
        _ = try Scheme(algorithm: algorithm, parameters: parameters)
    }

    /// The most work one verification may ask for, in units of one KiB of memory passed over once (native argon2id
    /// at OWASP's 19 MiB and 2 passes is 38,912): a few native verifications (decision 16; measured here, scrypt at
    /// 64 MiB took 6–7 times a native verification, PBKDF2-HMAC-SHA256 at 120,000 rounds and two blocks 2.5 times).
    /// STANDARD_SCRYPT is bounded by memory (128·N·r·p ≤ 64 MiB, p ≤ 4), bcrypt by its cost (≤ 14), ARGON2 by
    /// memory × passes, PBKDF2 by output blocks × rounds.
    static let scryptMemoryLimit = 64 << 20
    static let scryptParallelizationLimit = 4
    static let argon2WorkLimitKiB = 128 << 10
    static let pbkdf2BlockRoundsLimit = 240_000

    /// A per-user fault of an imported hash under `algorithm` and `parameters` (already valid): a bcrypt cost above
    /// 14, a PBKDF2 output whose length times the rounds asks for more than ``pbkdf2BlockRoundsLimit``; nil when
    /// the hash can be verified within the bounds.
    package static func userFault(_ stored: StoredPassword) -> String? {
        guard let scheme = try? Scheme(algorithm: stored.algorithm, parameters: stored.parameters) else { return nil }
        return userFault(stored, scheme)
    }

    private static func userFault(_ stored: StoredPassword, _ scheme: Scheme) -> String? {
        switch scheme.kind {
        case .bcrypt:
            guard let cost = BCrypt.cost(of: stored.hash) else { return nil }  // verifies as no password, as before
            return cost > BCrypt.maximumCost ? "bcrypt cost \(cost) is above \(BCrypt.maximumCost)" : nil
        case .pbkdf2(let function, let rounds):
            guard !stored.hash.isEmpty else { return "passwordHash is empty" }
            let blocks = (stored.hash.count + function.outputLength - 1) / function.outputLength
            return blocks * rounds > pbkdf2BlockRoundsLimit
                ? "passwordHash of \(stored.hash.count) bytes at \(rounds) rounds asks for more than \(pbkdf2BlockRoundsLimit) PBKDF2 blocks"
                : nil
        default:
            return nil
        }
    }

    /// The work of verifying `stored`, in ``argon2WorkLimitKiB``'s units (KiB passed over once), estimated from its
    /// parameters; nil for an algorithm or parameters that cannot be verified.
    package static func estimatedWorkKiB(_ stored: StoredPassword) -> Double? {
        guard let scheme = try? Scheme(algorithm: stored.algorithm, parameters: stored.parameters) else { return nil }
        switch scheme.kind {
        // Measured here: scrypt at 16 MiB took 66 ms, about 4 KiB-passes of argon2id per KiB.
        case .firebaseScrypt(_, let rounds, let memoryCost):
            return 4 * Double(128 * (1 << memoryCost) * rounds) / 1024
        case .standardScrypt(let n, let r, let p, _):
            return 4 * Double(128 * n * r * p) / 1024
        case .argon2(let argon2):
            return Double(argon2.memoryKiB) * Double(argon2.iterations)
        case .bcrypt:
            // Cost 16 is about five seconds of one core, so cost 10 about two native verifications.
            return BCrypt.cost(of: stored.hash).map { 80 * Double(1 << $0) }
        case .pbkdf2(let function, let rounds):
            let blocks = max(1, (stored.hash.count + function.outputLength - 1) / function.outputLength)
            return 0.4 * Double(blocks * rounds)
        case .hmac, .digest:
            return 0
        }
    }

    /// An algorithm with its parameters parsed and in bounds.
    private struct Scheme {
        enum Kind {
            case firebaseScrypt(signerKey: [UInt8], rounds: Int, memoryCost: Int)
            case standardScrypt(cpuMemCost: Int, blockSize: Int, parallelization: Int, derivedKeyLength: Int)
            case bcrypt
            case pbkdf2(HashFunction, rounds: Int)
            case hmac(HashFunction, signerKey: [UInt8], saltFirst: Bool)
            case digest(HashFunction, rounds: Int, passwordFirst: Bool)
            case argon2(Argon2Parameters)
        }

        var kind: Kind
        var saltSeparator: [UInt8] = []

        init(algorithm: String, parameters: [String: String]) throws(ImportParameterError) {
            func integer(_ name: String, in range: ClosedRange<Int>, else code: String) throws(ImportParameterError) -> Int {
                try ImportedHashVerifier.integer(parameters, name, in: range, else: code)
            }
            func signerKey() throws(ImportParameterError) -> [UInt8] {
                guard let text = parameters["signerKey"], let key = Base64URL.decode(text), !key.isEmpty else {
                    throw ImportParameterError(code: "INVALID_HASH_KEY")
                }
                return key
            }
            let order = parameters["passwordHashOrder"]
            switch algorithm {
            case "SCRYPT":
                let rounds = try integer("rounds", in: 1...8, else: "INVALID_HASH_ROUNDS")
                let memoryCost = try integer("memoryCost", in: 1...14, else: "INVALID_HASH_MEMORY_COST")
                kind = .firebaseScrypt(signerKey: try signerKey(), rounds: rounds, memoryCost: memoryCost)
            case "STANDARD_SCRYPT":
                let cpuMemCost = try integer("cpuMemCost", in: 2...(1 << 17), else: "INVALID_HASH_CPU_MEM_COST")
                guard cpuMemCost & (cpuMemCost - 1) == 0 else { throw ImportParameterError(code: "INVALID_HASH_CPU_MEM_COST") }
                let blockSize = try integer("blockSize", in: 1...16, else: "INVALID_HASH_BLOCK_SIZE")
                let parallelization = try integer("parallelization", in: 1...16, else: "INVALID_HASH_PARALLELIZATION")
                let derivedKeyLength = try integer("dkLen", in: 1...128, else: "INVALID_HASH_DERIVED_KEY_LENGTH")
                // scrypt needs N < 2^(16 r): only r = 1 with N of 2^16 or 2^17 falls foul.
                guard blockSize > 1 || cpuMemCost < 1 << 16 else { throw ImportParameterError(code: "INVALID_HASH_CPU_MEM_COST") }
                // Decision 16: one guess costs at most a few native verifications.
                guard parallelization <= scryptParallelizationLimit else {
                    throw ImportParameterError(code: "INVALID_HASH_PARALLELIZATION")
                }
                guard 128 * cpuMemCost * blockSize * parallelization <= scryptMemoryLimit else {
                    throw ImportParameterError(code: "INVALID_HASH_CPU_MEM_COST")
                }
                kind = .standardScrypt(
                    cpuMemCost: cpuMemCost, blockSize: blockSize, parallelization: parallelization, derivedKeyLength: derivedKeyLength
                )
            case "BCRYPT":
                kind = .bcrypt
            case "PBKDF2_SHA256", "PBKDF_SHA1":
                let function: HashFunction = algorithm == "PBKDF_SHA1" ? .sha1 : .sha256
                kind = .pbkdf2(function, rounds: try integer("rounds", in: 1...120_000, else: "INVALID_HASH_ROUNDS"))
            case "HMAC_SHA512", "HMAC_SHA256", "HMAC_SHA1", "HMAC_MD5":
                let function = HashFunction(rawValue: String(algorithm.dropFirst("HMAC_".count)))!
                kind = .hmac(function, signerKey: try signerKey(), saltFirst: order == "SALT_AND_PASSWORD")
            case "SHA512", "SHA256", "SHA1", "MD5":
                let rounds = try integer("rounds", in: (algorithm == "MD5" ? 0 : 1)...8192, else: "INVALID_HASH_ROUNDS")
                kind = .digest(HashFunction(rawValue: algorithm)!, rounds: rounds, passwordFirst: order == "PASSWORD_AND_SALT")
            case "ARGON2":
                kind = .argon2(try Argon2Parameters(parameters))
            default:
                throw ImportParameterError(code: "INVALID_HASH_ALGORITHM")
            }
            if let text = parameters["saltSeparator"] {
                guard let bytes = Base64URL.decode(text) else { throw ImportParameterError(code: "INVALID_HASH_SALT_SEPARATOR") }
                saltSeparator = bytes
            }
        }
    }

    /// The decimal parameter `name`, in `range`, or the fault `code`.
    static func integer(_ parameters: [String: String], _ name: String, in range: ClosedRange<Int>, else code: String)
        throws(ImportParameterError) -> Int
    {
        guard let text = parameters[name], let value = Int(text), range.contains(value) else { throw ImportParameterError(code: code) }
        return value
    }

    /// The digests the `HMAC_*`, plain-digest and PBKDF families name.
    enum HashFunction: String {
        case md5 = "MD5"
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha512 = "SHA512"

        /// Bytes of one digest (one PBKDF2 block).
        var outputLength: Int {
            switch self {
            case .md5: 16
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        }

        func digest(_ message: [UInt8]) -> [UInt8] {
            switch self {
            case .md5: Array(Insecure.MD5.hash(data: message))
            case .sha1: Array(Insecure.SHA1.hash(data: message))
            case .sha256: Array(SHA256.hash(data: message))
            case .sha512: Array(SHA512.hash(data: message))
            }
        }

        func hmac(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
            let key = SymmetricKey(data: key)
            return switch self {
            case .md5: Array(HMAC<Insecure.MD5>.authenticationCode(for: message, using: key))
            case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            }
        }
    }
}
