import Foundation

/// "The caller's session must still be live and its token not older than V", checked in the
/// writing transaction (identity-toolkit.md §3.2 step 5).
package struct SessionGuard: Sendable, Equatable {
    package var sessionID: String
    package var issuedAt: Int64

    /// Creates a guard.
    package init(sessionID: String, issuedAt: Int64) {
        self.sessionID = sessionID
        self.issuedAt = issuedAt
    }
}
