package import Foundation

/// Admin-only use cases beyond single-account reads and writes (identity-toolkit.md §4.10–4.14).
package struct AdminService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    package let store: any AdminStore
    /// The accounts an admin acts on by id or email.
    package let users: any AccountStore
    package let keys: any KeyAdministration
    /// Signs the ID tokens an admin mints for a user.
    package let signer: any TokenSigner
    /// Hashes imported plain passwords and checks imported hashes.
    package let hasher: any PasswordHasher
    /// Where listings that tolerate a replica's lag read (`batchGet`, `downloadAccount`, `query`):
    /// a read replica when one is configured, else ``store``. Nothing that decides a sign-in, a
    /// revocation or a code reads there.
    package let listings: any AdminStore

    /// Wires the service.
    package init(
        accounts: AccountService, environment: ServiceEnvironment, store: any AdminStore, users: any AccountStore,
        keys: any KeyAdministration, signer: any TokenSigner, hasher: any PasswordHasher, listings: (any AdminStore)? = nil
    ) {
        self.listings = listings ?? store
        self.accounts = accounts
        self.environment = environment
        self.store = store
        self.users = users
        self.keys = keys
        self.signer = signer
        self.hasher = hasher
    }

    /// `accounts:query`: the users matching `query` and how many match in all.
    package func query(_ query: UserQuery) async throws -> (count: Int, users: [UserRecord]) {
        try await listings.query(query)
    }

    /// The audit trail, newest first, of one user or of everyone.
    package func auditEvents(localID: String?, limit: Int) async throws -> [AuditEvent] {
        try await store.auditEvents(localID: localID, limit: limit)
    }

    /// `downloadAccount`'s page: up to `limit` users after `after`, in local-id order.
    package func usersPage(after: String?, limit: Int) async throws -> [UserRecord] {
        try await listings.usersPage(after: after, limit: limit)
    }

    /// The owner of a session, whatever its state; nil when there is no such session.
    package func sessionOwner(sessionID: String) async throws -> String? {
        try await users.sessionState(sessionID: sessionID)?.localID
    }

    /// The service's clock, for what an import stamps.
    package func now() -> Date { environment.clock.now() }

    /// `accounts:unlock` (federation-and-limits.md §E.4): clears the password lockout of an address
    /// (or of a user's address), both networks, and records `ACCOUNT_UNLOCKED`. Returns the address
    /// and whether anything was locked or counted.
    package func unlock(email rawEmail: String?, localID: String?) async throws -> (email: String, cleared: Bool) {
        var email: String?
        var owner: String?
        if let rawEmail, !rawEmail.isEmpty {
            guard let normalized = EmailAddress.normalize(rawEmail) else { throw AccountError(.invalidEmail) }
            email = normalized
        } else if let localID, !localID.isEmpty {
            guard let user = try await users.user(localID: localID) else { throw AccountError(.userNotFound) }
            guard let address = user.email else { throw AccountError(.missingEmail, "The user has no email address.") }
            email = address
            owner = localID
        }
        guard let email else { throw AccountError(.missingEmail) }
        let cleared = try await environment.limiter.clearLockout(email: email)
        if owner == nil { owner = try await users.user(email: email)?.localID }
        try await store.audit(.accountUnlocked, localID: owner, details: ["cleared": String(cleared)])
        return (email, cleared)
    }

    /// `accounts:batchDelete` (identity-toolkit.md §4.12): per-id outcome, `nil` when deleted (or unknown).
    package func batchDelete(localIDs: [String], force: Bool) async throws -> [(index: Int, localID: String, message: String)] {
        guard (1...1000).contains(localIDs.count) else { throw AccountError(.localIDListExceedsLimit) }
        var errors: [(Int, String, String)] = []
        for (index, localID) in localIDs.enumerated() {
            guard let user = try await users.user(localID: localID) else { continue }
            if !user.disabled && !force {
                errors.append((index, localID, "NOT_DISABLED : Disable the account before batch deletion."))
                continue
            }
            do {
                try await accounts.adminDelete(localID: localID)
            } catch let error as AccountError where error.code == .userNotFound {
                continue
            }
        }
        return errors
    }

    /// `projects:createSessionCookie` (identity-toolkit.md §4.14): the ID token's claims re-issued as a
    /// long-lived cookie of the same session.
    package func createSessionCookie(idToken: String?, validDuration: Int64?) async throws -> String {
        let caller = try await accounts.authenticate(idToken)
        let duration = validDuration ?? 1_209_600
        guard (300...1_209_600).contains(duration) else { throw AccountError(.invalidDuration) }
        let ticket = try await store.recordMint(sessionID: caller.sessionID, localID: caller.localID, now: environment.clock.now())
        let wait = Double(ticket.issuedAt) - environment.clock.now().timeIntervalSince1970
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000) + 1)) }
        var claims = caller.claims
        claims["iss"] = .string("https://session.firebase.google.com/\(environment.settings.projectID)")
        claims["iat"] = .int(ticket.issuedAt)
        claims["exp"] = .int(ticket.issuedAt + duration)
        return try await signer.sign(claims: claims)
    }
}
