package import Foundation

/// A refresh attempt (identity-toolkit.md §3.3).
package struct RefreshRequest: Sendable {
    package var sessionID: String
    package var generation: Int64
    package var graceSeconds: TimeInterval
    package var userAgent: String?
    package var ipAddress: String?
    package var now: Date
    /// Checks the token's MAC against the session's salt and key id.
    package var verifyMAC: @Sendable (_ salt: [UInt8], _ keyID: String) -> Bool

    /// Creates a request.
    package init(
        sessionID: String, generation: Int64, graceSeconds: TimeInterval, userAgent: String?, ipAddress: String?, now: Date,
        verifyMAC: @escaping @Sendable ([UInt8], String) -> Bool
    ) {
        self.sessionID = sessionID
        self.generation = generation
        self.graceSeconds = graceSeconds
        self.userAgent = userAgent
        self.ipAddress = ipAddress
        self.now = now
        self.verifyMAC = verifyMAC
    }
}

/// How a refresh ended.
package enum RefreshResult: Sendable {
    /// A new ID token may be minted; the session is at generation `session.generation` (rotated, or
    /// unchanged for a tolerated replay of the previous token).
    case refreshed(UserRecord, SessionRecord, MintTicket)
    /// An old token was replayed: the session has been revoked (committed).
    case reused
}
