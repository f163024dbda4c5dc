/// A stored password credential: the algorithm's name, its output, salt and parameters. Native
/// credentials are `ARGON2ID` with the PHC string as `hash`; imported ones keep their algorithm
/// until the next successful sign-in upgrades them.
package struct StoredPassword: Sendable, Equatable {
    /// `ARGON2ID`, or an imported algorithm (`SCRYPT`, `BCRYPT`, …).
    package var algorithm: String
    /// The hash bytes (for `ARGON2ID`, the PHC string's UTF-8 bytes).
    package var hash: [UInt8]
    /// The salt, for algorithms that keep it apart.
    package var salt: [UInt8]?
    /// Imported algorithms' parameters (rounds, memory cost, signer key …) as strings.
    package var parameters: [String: String]

    /// The native algorithm's name.
    package static let argon2id = "ARGON2ID"

    /// Creates a credential.
    package init(algorithm: String, hash: [UInt8], salt: [UInt8]? = nil, parameters: [String: String] = [:]) {
        self.algorithm = algorithm
        self.hash = hash
        self.salt = salt
        self.parameters = parameters
    }

    /// Whether this is the native algorithm (nothing to upgrade).
    package var isNative: Bool { algorithm == Self.argon2id }
}

/// The admission lane a hash waits in. A sign-in from a network the account already knows (one of
/// its sessions was active from the address, federation-and-limits.md §E.4) has a lane of its own
/// that is served first: a flood of guesses from everywhere else fills only the standard lane, so
/// the account's owner still signs in at the speed of one hash rather than behind the flood.
package enum HashLane: Sendable, Equatable {
    /// Sign-ups, resets, and sign-ins from unknown networks.
    case standard
    /// Sign-ins from a network the account knows.
    case known
}

/// Hashes and verifies passwords off the event loops, with a bounded number in flight.
package protocol PasswordHasher: Sendable {
    /// A new native credential for `password`.
    func hash(_ password: String) async throws -> StoredPassword
    /// Whether `password` matches `stored`, whatever its algorithm, waiting in `lane`.
    func verify(_ password: String, against stored: StoredPassword, lane: HashLane) async throws -> Bool
    /// Spends the time of one native verification and returns `false`, so an unknown account
    /// costs what a known one does.
    func dummyVerify(_ password: String) async throws -> Bool
    /// Checks an import's `hashAlgorithm` and its parameters (identity-toolkit.md §4.11), throwing
    /// `importFault` with the first fault's name; within decision 16's bounds on work per guess.
    func validateImport(algorithm: String, parameters: [String: String]) throws(AccountError)
    /// Whether `stored` should be replaced by a new native hash once its password is known: an
    /// imported algorithm, or argon2id made with other parameters than the current ones (an
    /// operator who raised `ACCOUNTD_ARGON2_*` upgrades users as they sign in).
    func needsRehash(_ stored: StoredPassword) -> Bool
    /// A per-user fault of an imported hash that passed ``validateImport(algorithm:parameters:)``
    /// (a bcrypt cost or a PBKDF2 length that asks for too much work); nil when it can be verified.
    func importFault(_ stored: StoredPassword) -> String?
}

extension PasswordHasher {
    /// Verifies in the standard lane.
    package func verify(_ password: String, against stored: StoredPassword) async throws -> Bool {
        try await verify(password, against: stored, lane: .standard)
    }
}
