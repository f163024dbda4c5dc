package import Foundation

/// The accounts and sessions port. Every write is one transaction that locks the user row first,
/// re-checks what the request relied on (§3.2 step 5), changes what it must, publishes revocations
/// to the other replicas, and records the mint of any token it authorises (§3.5).
package protocol AccountStore: Sendable {
    /// One user by id.
    func user(localID: String) async throws -> UserRecord?
    /// One user by (normalised) email.
    func user(email: String) async throws -> UserRecord?
    /// Users by ids, emails and phone numbers, in that order, without duplicates.
    func users(localIDs: [String], emails: [String], phoneNumbers: [String]) async throws -> [UserRecord]
    /// The first account (by link time) having a federated identity with `email` (§A.11).
    func userWithFederatedEmail(_ email: String) async throws -> UserRecord?
    /// The users holding these federated identities `(providerId, rawId)`, in that order.
    func users(federatedIDs: [(providerID: String, rawID: String)]) async throws -> [UserRecord]
    /// The revocation state of a session, for the cache.
    func sessionState(sessionID: String) async throws -> SessionState?
    /// A user's sessions, newest first; `before` pages by (createdAt, sessionID).
    func sessions(localID: String, includeRevoked: Bool, limit: Int, before: SessionCursor?) async throws -> [SessionRecord]

    /// Inserts a user (and its first session). Throws `emailExists`, `phoneNumberExists`,
    /// `duplicateLocalID`.
    func createUser(_ user: UserRecord, session: NewSession?, now: Date) async throws -> (UserRecord, MintTicket?)

    /// Signs in `user`, as the caller read it and verified its password: the user must still exist
    /// (`userNotFound`), have the credential version the caller verified (`invalidPassword`), and be
    /// enabled (`userDisabled`). Replaces the stored hash (imported, or of old parameters) by
    /// `upgradedPassword` (compare-and-swap on the version).
    func startSession(
        for user: UserRecord, upgradedPassword: StoredPassword?, session: NewSession, now: Date
    ) async throws -> (UserRecord, MintTicket)

    /// Custom-token sign-in (federation-and-limits.md §C.4, §C.5), one transaction: the token's
    /// hash recorded as used unless `replay` is nil (`INVALID_CUSTOM_TOKEN` when it already was),
    /// the user created when absent (`customAuth`; a concurrent creation of the same id makes this
    /// an existing-user sign-in) or refused when disabled (`USER_DISABLED`, the token unspent),
    /// `customAuth` and `lastLoginAt` set, the session started with its claims overlay.
    func signInWithCustomToken(
        localID: String, replay: (hash: [UInt8], until: Date)?, session: NewSession, now: Date
    ) async throws -> (user: UserRecord, ticket: MintTicket, isNewUser: Bool)

    /// The refresh transaction of identity-toolkit.md §3.3/§4.17.
    func refresh(_ request: RefreshRequest) async throws -> RefreshResult

    /// Applies a change to a user; see ``UserChange``. `guardSession` re-checks the caller's session
    /// under the row lock. A `replacement` session is created after any revocation.
    func update(
        localID: String, guardSession: SessionGuard?, change: UserChange, replacement: NewSession?, now: Date
    ) async throws -> (UserRecord, MintTicket?, SessionRecord?)

    /// Deletes a user; sessions become tombstones (`USER_DELETED`).
    func delete(localID: String, guardSession: SessionGuard?, now: Date) async throws

    /// Revokes the given sessions of a user (`sessionNotFound` for one that is not theirs), or all of
    /// them (and moves V) when `sessionIDs` is nil. Returns the newly revoked ids and V.
    func revokeSessions(localID: String, sessionIDs: [String]?, reason: RevokeReason, now: Date) async throws -> (
        revoked: [String], validSince: Int64
    )
}

/// Position in a session listing.
package struct SessionCursor: Sendable, Equatable {
    package var createdAt: Date
    package var sessionID: String

    /// Creates a cursor.
    package init(createdAt: Date, sessionID: String) {
        self.createdAt = createdAt
        self.sessionID = sessionID
    }
}
