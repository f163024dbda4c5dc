import Foundation

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
