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

/// Set, clear or keep an optional field.
package enum FieldChange<Value: Sendable & Equatable>: Sendable, Equatable {
    case keep
    case set(Value)
    case clear
}

/// One `accounts:update` worth of changes (identity-toolkit.md §4.7 B).
package struct UserChange: Sendable, Equatable {
    package var displayName: FieldChange<String> = .keep
    package var photoURL: FieldChange<String> = .keep
    /// A new, normalised email (`.clear` removes it).
    package var email: FieldChange<String> = .keep
    package var emailVerified: Bool?
    package var password: StoredPassword?
    package var deleteProviders: [String] = []
    /// An admin's link (§A.9): replaces the user's identity of that provider; nothing is revoked.
    package var linkIdentity: FederatedIdentity?
    package var phoneNumber: FieldChange<String> = .keep
    package var disabled: Bool?
    package var customAttributes: FieldChange<String> = .keep
    package var createdAt: Date?
    package var lastLoginAt: Date?
    /// `validSince` was sent: revoke every session now.
    package var revokeAll = false
    /// Codes and emails to store with the change (the recover notice of an email change).
    package var notices: [OutgoingCode] = []

    /// No change.
    package init() {}

    /// Whether the change gives the account a way to sign in (an email, a password, a phone number
    /// or a linked identity): an anonymous account stops being anonymous for good (decision 14).
    package var addsCredential: Bool {
        if case .set = email { return true }
        if case .set = phoneNumber { return true }
        return password != nil || linkIdentity != nil
    }

    /// Which fields changed, for the audit trail (values of secrets omitted).
    package var summary: [String: String] {
        var fields: [String: String] = [:]
        func note<T>(_ name: String, _ value: FieldChange<T>) {
            switch value {
            case .keep: break
            case .set(let v): fields[name] = "\(v)"
            case .clear: fields[name] = "(cleared)"
            }
        }
        note("displayName", displayName)
        note("photoUrl", photoURL)
        note("email", email)
        note("phoneNumber", phoneNumber)
        note("customAttributes", customAttributes)
        if let emailVerified { fields["emailVerified"] = String(emailVerified) }
        if password != nil { fields["password"] = "(changed)" }
        if !deleteProviders.isEmpty { fields["deleteProvider"] = deleteProviders.joined(separator: ",") }
        if let disabled { fields["disabled"] = String(disabled) }
        if revokeAll { fields["validSince"] = "(revoke all)" }
        return fields
    }
}

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

extension UserChange {
    /// Why applying this change to `user` revokes every session, if it does (identity-toolkit.md §4.7 B,
    /// §2.7): a new password, then a new email, then disabling an enabled account, then an explicit
    /// `validSince`; nil when no session is revoked.
    package func revokeReason(for user: UserRecord) -> RevokeReason? {
        if password != nil { return .passwordChanged }
        if email != .keep { return .emailChanged }
        if disabled == true && !user.disabled { return .userDisabled }
        if revokeAll { return .allSessionsRevoked }
        return nil
    }

    /// Whether the change alters what a token check reads of the user beyond a revocation (its
    /// disabled flag, its custom claims): every replica must forget what it holds of the user.
    package var changesTokenState: Bool {
        disabled != nil || customAttributes != .keep
    }
}
