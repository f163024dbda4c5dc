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

    /// Whether `password` matches the imported `stored` credential. An unknown algorithm is `false`; parameters that
    /// fail `validateParameters` throw that `ImportParameterError` (the credential is corrupt, not the password wrong).
    package static func verify(_ password: String, against stored: StoredPassword) throws -> Bool {
        guard supportedAlgorithms.contains(stored.algorithm) else { return false }
        let scheme = try Scheme(algorithm: stored.algorithm, parameters: stored.parameters)
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
            guard (1...maximumPBKDF2Length).contains(stored.hash.count) else { return false }
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

    /// The longest PBKDF2 output verified (bounds the work a stored hash can ask for).
    private static let maximumPBKDF2Length = 256

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
