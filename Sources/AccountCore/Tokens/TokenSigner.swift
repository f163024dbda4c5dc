package import Foundation

/// Signs and verifies the service's JWTs (ID tokens, session cookies): RS256 with the one current
/// signing key, verification with every published key (identity-toolkit.md §3.6).
package protocol TokenSigner: Sendable {
    /// Signs `claims` as a compact JWT with header `{"alg":"RS256","kid":…,"typ":"JWT"}`.
    func sign(claims: [String: JSONValue]) async throws -> String

    /// Checks the JWT's form, `alg` RS256, a published `kid` and the signature, and returns the
    /// payload. Any failure is `AccountError(.invalidIDToken)`; claims are not judged here.
    func verify(_ token: String) async throws -> [String: JSONValue]

    /// Every published public key (next, current, retired until removal).
    func publishedKeys() async throws -> [PublishedKey]
}

/// A public key as the key routes publish it.
package struct PublishedKey: Sendable, Equatable {
    /// base64url of the first 16 bytes of SHA-256 over the DER public key.
    package var kid: String
    /// RSA modulus, base64url without padding (JWK `n`).
    package var modulus: String
    /// RSA public exponent, base64url without padding (JWK `e`).
    package var exponent: String
    /// A self-signed X.509 certificate for the key, PEM.
    package var certificatePEM: String

    /// Creates a published key.
    package init(kid: String, modulus: String, exponent: String, certificatePEM: String) {
        self.kid = kid
        self.modulus = modulus
        self.exponent = exponent
        self.certificatePEM = certificatePEM
    }
}

/// A signing key as stored: public parts in the clear, the private key sealed under the
/// key-encryption key. The store never sees a private key in the clear.
package struct SigningKeyRecord: Sendable, Equatable {
    /// Life cycle of identity-toolkit.md §3.6: published before signing, published after retiring.
    package enum State: String, Sendable {
        case next, current, retired
    }

    package var kid: String
    package var publicKeyDER: [UInt8]
    package var certificatePEM: String
    /// AES-GCM sealed box (nonce ‖ ciphertext ‖ tag) of the private key's DER.
    package var sealedPrivateKey: [UInt8]
    /// Which key-encryption key sealed it.
    package var kekID: String
    package var state: State
    package var createdAt: Date
    package var activatedAt: Date?
    package var retiredAt: Date?
    /// After this instant the key is no longer published.
    package var removeAfter: Date?

    /// Creates a record.
    package init(
        kid: String, publicKeyDER: [UInt8], certificatePEM: String, sealedPrivateKey: [UInt8], kekID: String,
        state: State, createdAt: Date, activatedAt: Date? = nil, retiredAt: Date? = nil, removeAfter: Date? = nil
    ) {
        self.kid = kid
        self.publicKeyDER = publicKeyDER
        self.certificatePEM = certificatePEM
        self.sealedPrivateKey = sealedPrivateKey
        self.kekID = kekID
        self.state = state
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
        self.removeAfter = removeAfter
    }
}

/// Where signing keys live (PostgreSQL), shared by every replica.
package protocol SigningKeyStore: Sendable {
    /// Every key not yet past `removeAfter` at `now`.
    func publishedKeys(at now: Date) async throws -> [SigningKeyRecord]
    /// Adds a key. Adding a `current` key when one exists throws `SigningKeyConflict` (another
    /// replica won the race; reload).
    func insert(_ key: SigningKeyRecord) async throws
    /// In one transaction: the current key becomes retired (removed from publication at
    /// `removeAfter`), and `kid` (a `next` key) becomes current.
    func promote(kid: String, at now: Date, retiredRemoveAfter: Date) async throws
}

/// Another replica created the current key first.
package struct SigningKeyConflict: Error {
    /// Creates the error.
    package init() {}
}

/// Makes and checks refresh tokens (identity-toolkit.md §3.3): an opaque string carrying the session id,
/// the generation and an HMAC-SHA256 under a per-session key derived (HKDF) from the refresh master
/// key and the session's random salt. Nothing that could rebuild a token is stored.
package protocol RefreshTokenCodec: Sendable {
    /// Id of the master key new sessions use (stored on the session row).
    var currentKeyID: String { get }
    /// The token for generation `generation` of a session.
    func token(sessionID: String, generation: Int64, salt: [UInt8], keyID: String) throws -> String
    /// The session id and generation a token claims, if it is well-formed; nil as well for a token
    /// whose MAC can be checked without the session (``DecodedRefreshToken/verified``) and fails.
    func decode(_ token: String) -> DecodedRefreshToken?
    /// Whether the token's MAC verifies for the session's salt and key id (and, for a token that
    /// carries them, whether they are the session's).
    func verify(_ token: String, salt: [UInt8], keyID: String) -> Bool
}

/// What a refresh token claims.
package struct DecodedRefreshToken: Sendable, Equatable {
    package var sessionID: String
    package var generation: Int64
    /// Its MAC was checked already, before any database read (a token that carries its salt).
    package var verified: Bool

    /// Creates a decoded token.
    package init(sessionID: String, generation: Int64, verified: Bool) {
        self.sessionID = sessionID
        self.generation = generation
        self.verified = verified
    }
}
