import AccountCore
import CArgon2

/// An imported `ARGON2` hash's parameters (the Admin SDK's `Argon2` import hash, Identity Toolkit's
/// `argon2Parameters`), checked against the SDK's bounds, and the reference implementation that recomputes one.
/// libargon2 rather than libsodium: imports may use Argon2d, version 1.0, salts of any length and associated data,
/// none of which libsodium's `crypto_pwhash` verifies.
struct Argon2Parameters {
    enum Variant: String {
        case argon2d = "ARGON2_D"
        case argon2i = "ARGON2_I"
        case argon2id = "ARGON2_ID"
    }

    var variant: Variant
    /// `0x10` or `0x13`.
    var version: UInt32
    var iterations: UInt32
    var memoryKiB: UInt32
    var parallelism: UInt32
    var hashLength: Int
    var associatedData: [UInt8]

    /// Parses the flattened parameters (`hashType`, `version`, `iterations`, `memoryCostKib`, `parallelism`,
    /// `hashLengthBytes`, `associatedData`), throwing the import's fault for the first one missing or out of bounds.
    init(_ parameters: [String: String]) throws(ImportParameterError) {
        func integer(_ name: String, in range: ClosedRange<Int>, else code: String) throws(ImportParameterError) -> Int {
            try ImportedHashVerifier.integer(parameters, name, in: range, else: code)
        }
        guard let variant = parameters["hashType"].flatMap(Variant.init(rawValue:)) else {
            throw ImportParameterError(code: "INVALID_HASH_ALGORITHM")
        }
        self.variant = variant
        switch parameters["version"] {
        case nil, "VERSION_13", "19": version = 0x13
        case "VERSION_10", "16": version = 0x10
        default: throw ImportParameterError(code: "INVALID_HASH_ALGORITHM")
        }
        iterations = UInt32(try integer("iterations", in: 1...16, else: "INVALID_HASH_ROUNDS"))
        parallelism = UInt32(try integer("parallelism", in: 1...16, else: "INVALID_HASH_PARALLELIZATION"))
        // Argon2 needs at least 8 KiB a lane.
        memoryKiB = UInt32(try integer("memoryCostKib", in: (8 * Int(parallelism))...32_768, else: "INVALID_HASH_MEMORY_COST"))
        // Decision 16: memory times passes within a few native verifications.
        guard Int(memoryKiB) * Int(iterations) <= ImportedHashVerifier.argon2WorkLimitKiB else {
            throw ImportParameterError(code: "INVALID_HASH_ROUNDS")
        }
        hashLength = try integer("hashLengthBytes", in: 4...1024, else: "INVALID_HASH_DERIVED_KEY_LENGTH")
        associatedData = []
        if let text = parameters["associatedData"] {
            guard let bytes = Base64URL.decode(text) else { throw ImportParameterError(code: "INVALID_HASH_KEY") }
            associatedData = bytes
        }
    }

    /// The hash of `password` under these parameters, or `nil` when libargon2 refuses the input (a salt shorter than
    /// 8 bytes: such a credential can never match).
    func derive(password: [UInt8], salt: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: hashLength)
        var password = password
        var salt = salt
        var associatedData = associatedData
        let status = output.withUnsafeMutableBufferPointer { out in
            password.withUnsafeMutableBufferPointer { pwd in
                salt.withUnsafeMutableBufferPointer { salt in
                    associatedData.withUnsafeMutableBufferPointer { ad in
                        var context = argon2_context(
                            out: out.baseAddress, outlen: UInt32(out.count),
                            pwd: pwd.baseAddress, pwdlen: UInt32(pwd.count),
                            salt: salt.baseAddress, saltlen: UInt32(salt.count),
                            secret: nil, secretlen: 0,
                            ad: ad.count == 0 ? nil : ad.baseAddress, adlen: UInt32(ad.count),
                            t_cost: iterations, m_cost: memoryKiB, lanes: parallelism,
                            // The lanes run in this thread: verification already runs on the hashing pool.
                            threads: 1, version: version,
                            allocate_cbk: nil, free_cbk: nil, flags: 0  // ARGON2_DEFAULT_FLAGS
                        )
                        return argon2_ctx(&context, argon2_type(rawValue: variant.cValue))
                    }
                }
            }
        }
        return status == ARGON2_OK.rawValue ? output : nil
    }
}

extension Argon2Parameters.Variant {
    fileprivate var cValue: UInt32 {
        switch self {
        case .argon2d: Argon2_d.rawValue
        case .argon2i: Argon2_i.rawValue
        case .argon2id: Argon2_id.rawValue
        }
    }
}
