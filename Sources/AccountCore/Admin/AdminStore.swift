package import Foundation

/// Reads and writes only admin tools need: paging, queries, the audit trail, session-cookie mints.
package protocol AdminStore: Sendable {
    /// Users in ascending `localId` order after `after`.
    func usersPage(after: String?, limit: Int) async throws -> [UserRecord]
    /// `accounts:query`: the number of matches and a page of them.
    func query(_ query: UserQuery) async throws -> (count: Int, users: [UserRecord])
    /// A user's audit trail, newest first.
    func auditEvents(localID: String?, limit: Int) async throws -> [AuditEvent]
    /// Records a mint for `sessionID` (session cookies count for §3.5): the session must be live,
    /// returns the ticket.
    func recordMint(sessionID: String, localID: String, now: Date) async throws -> MintTicket
    /// Records an admin's action in the audit trail.
    func audit(_ action: AuditAction, localID: String?, details: [String: String]) async throws
}

/// `accounts:query` (identity-toolkit.md §4.13).
package struct UserQuery: Sendable, Equatable {
    /// Sort keys.
    package enum SortBy: String, Sendable {
        case userID = "USER_ID"
        case createdAt = "CREATED_AT"
        case lastLoginAt = "LAST_LOGIN_AT"
        case userEmail = "USER_EMAIL"
        case name = "NAME"
    }

    package var emails: [String] = []
    package var localIDs: [String] = []
    package var phoneNumbers: [String] = []
    /// A prefix of the email, for operators' listings.
    package var emailPrefix: String?
    package var sortBy: SortBy = .userID
    package var descending = false
    package var limit = 500
    package var offset = 0

    /// Matches everything.
    package init() {}
}
