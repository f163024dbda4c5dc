import AccountCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// One transaction of the store (or one statement's connection, for a read or an optimistic
/// write): the connection between BEGIN and COMMIT, and the steps the features share. A feature
/// reads and locks through it, asks Core for the plan, and writes the plan through it; Core never
/// sees it, nor the driver under it.
struct StoreTransaction {
    let connection: DatabaseConnection
    let logger: Logger
    /// The tenant every statement is bound to (`''`, the default, until tenants exist).
    let tenant: String

    /// Runs a statement in the transaction.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger)
    }

    /// Runs a prepared statement in the transaction.
    @discardableResult
    func execute<Statement: PreparedQuery>(_ statement: Statement) async throws -> AsyncThrowingMapSequence<
        PostgresRowSequence, PostgresRow
    > {
        try await connection.execute(statement, logger: logger)
    }

    /// `COPY` of text-format rows into `table` (``CopyText``); names are the store's own, never input.
    func copy(into table: String, columns: [String], rows: CopyText) async throws {
        try await connection.copy(into: table, columns: columns, rows: rows.buffer, logger: logger)
    }

    /// Announces `revoked` to every replica (`pg_notify`, delivered when the transaction commits)
    /// and to this one when the store call ends. Every revocation goes through here.
    func announce(_ revoked: PostgresStore.Revoked) async throws {
        let invalidation: Invalidation
        switch revoked {
        case .user(let localID): invalidation = .user(localID)
        case .session(let sessionID): invalidation = .session(sessionID)
        }
        try await notify(invalidation)
        PostgresStore.announced?.revoked.withLock { $0.append(revoked) }
    }

    /// Counts `amount` in the counter `family` once the store call has committed (nothing when it
    /// rolls back or runs again after a conflict).
    func count(_ family: MetricFamily, _ labels: [String] = [], by amount: Int = 1) {
        guard amount > 0 else { return }
        PostgresStore.announced?.counts.withLock { $0.append((family, labels, amount)) }
    }

    /// Tells every replica's caches what changed (`pg_notify` on the revocation channel, delivered
    /// when the transaction commits): a provider config or a service account's signers for their
    /// ``NotifiedCache``s; revocations go through ``announce(_:)``, which also clears this replica's.
    func notify(_ invalidation: Invalidation) async throws {
        try await query("SELECT pg_notify(\(PostgresAccountStore.revocationChannel), \(invalidation.payload))")
    }

    /// The user `localID`; with `lock`, its row stays locked until the transaction ends.
    func user(localID: String, lock: Bool) async throws -> UserRecord? {
        lock
            ? try await firstUser(Prepared.UserByLocalIDForUpdate(tenant: tenant, localID: localID))
            : try await firstUser(Prepared.UserByLocalID(tenant: tenant, localID: localID))
    }

    /// The user with `email` (any case); with `lock`, its row stays locked until the transaction ends.
    func user(email: String, lock: Bool) async throws -> UserRecord? {
        lock
            ? try await firstUser(Prepared.UserByEmailForUpdate(tenant: tenant, email: email))
            : try await firstUser(Prepared.UserByEmail(tenant: tenant, email: email))
    }

    /// The user with phone number `phoneNumber` (canonical), its row locked until the transaction ends.
    func user(phoneNumber: String) async throws -> UserRecord? {
        try await firstUser(Prepared.UserByPhoneNumberForUpdate(tenant: tenant, phoneNumber: phoneNumber))
    }

    private func firstUser(_ statement: some PreparedQuery) async throws -> UserRecord? {
        for try await row in try await execute(statement) { return try PostgresAccountStore.decodeUser(row) }
        return nil
    }

    func localID(ofEmail email: String) async throws -> String? {
        for try await row in try await execute(Prepared.LocalIDByEmail(tenant: tenant, email: email)) {
            return try row.decode(String.self)
        }
        return nil
    }

    /// Whether the session `guardSession` names is live and belongs to `localID`.
    func isLive(_ guardSession: SessionGuard, localID: String) async throws -> Bool {
        let rows = try await query(
            """
            SELECT revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AND NOT user_deleted
            FROM sessions WHERE session_id = \(guardSession.sessionID) AND local_id = \(localID)
            """)
        var live = false
        for try await value in rows.decode(Bool.self) { live = value }
        return live
    }

    /// ``SessionGuard/admit(live:validSince:)`` for the caller's session, `user` locked.
    func check(_ guardSession: SessionGuard, user: UserRecord) async throws {
        try guardSession.admit(live: try await isLive(guardSession, localID: user.localID), validSince: user.validSince)
    }

    /// Revokes every live session of a locked user and moves V (identity-toolkit.md §3.5 item 2),
    /// and the credential version: pending second-factor credentials issued before die
    /// (mfa-phone-tenants.md §0.3).
    func revokeAll(user: UserRecord, reason: RevokeReason, now: Date) async throws
        -> (revoked: [String], validSince: Int64)
    {
        var lastMint: Date?
        for try await value in try await query(
            "SELECT max(last_mint_at) FROM sessions WHERE tenant_id = \(tenant) AND local_id = \(user.localID)"
        )
        .decode(Date?.self) {
            lastMint = value
        }
        let validSince = RevocationRules.validSince(revokedAt: now, lastMint: lastMint, previous: user.validSince)
        try await query(
            """
            UPDATE users SET tokens_valid_after = \(now), valid_since = \(validSince), credential_version = credential_version + 1
            WHERE tenant_id = \(tenant) AND local_id = \(user.localID)
            """
        )
        let rows = try await query(
            """
            UPDATE sessions SET revoked_at = \(now), revoke_reason = \(reason.rawValue)
            WHERE tenant_id = \(tenant) AND local_id = \(user.localID) AND revoked_at IS NULL RETURNING session_id
            """)
        var revoked: [String] = []
        for try await id in rows.decode(String.self) { revoked.append(id) }
        count(.sessionsRevoked, [reason.rawValue], by: revoked.count)
        try await announce(.user(user.localID))
        try await audit(
            .allSessionsRevoked, localID: user.localID,
            details: ["reason": reason.rawValue, "revoked": String(revoked.count), "validSince": String(validSince)])
        return (revoked.sorted(), validSince)
    }

    /// Writes an `audit_events` row in the current transaction. Revocations are always recorded;
    /// other changes when an admin made them (`always: false`).
    func audit(
        _ action: AuditAction, localID: String?, details: [String: String] = [:], always: Bool = true, actor: AuditActor? = nil
    ) async throws {
        let who = actor ?? AuditContext.actor ?? localID.map(AuditActor.user) ?? .system
        guard always || { if case .admin = who { return true } else { return false } }() else { return }
        let json = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        try await query(
            """
            INSERT INTO audit_events (tenant_id, actor_type, actor, action, local_id, details)
            VALUES (\(tenant), \(who.type), \(who.name), \(action.rawValue), \(localID), \(json)::jsonb)
            """)
    }

    /// Inserts a session and records its first mint: `iat` = max(now's second, V), `auth_time` = iat.
    func insertSession(_ session: NewSession, user: UserRecord, now: Date)
        async throws
        -> MintTicket
    {
        let (ticket, mintAt) = PostgresAccountStore.firstMint(now: now, validSince: user.validSince)
        // Rare facts of a session (an IdP's attributes, a second factor) keep the common insert short.
        if session.signInAttributes != nil || session.secondFactor != nil {
            _ = try await execute(
                Prepared.SessionInsertWithFacts(session, localID: user.localID, tenant: tenant, now: now, ticket: ticket, mintAt: mintAt))
        } else {
            _ = try await execute(
                Prepared.SessionInsert(session, localID: user.localID, tenant: tenant, now: now, ticket: ticket, mintAt: mintAt))
        }
        count(.sessionsCreated, [Telemetry.providerLabel(session.signInProvider)])
        return ticket
    }
}

extension StoreTransaction {
    /// Carries out THE RULE's plan (``TakeoverRules``) on `user`, in the caller's transaction: the
    /// credentials, the pending codes and the sessions. The row's own fields are in the caller's
    /// ``writeUser(_:)`` of the account after the plan (``StripPlan/applied(to:)``).
    func strip(_ plan: StripPlan, from user: UserRecord, now: Date)
        async throws
    {
        let localID = user.localID
        if plan.removePassword {
            try await query("DELETE FROM password_credentials WHERE tenant_id = \(tenant) AND local_id = \(localID)")
        }
        try await query("DELETE FROM federated_identities WHERE tenant_id = \(tenant) AND local_id = \(localID)")
        if !user.factors.isEmpty {
            try await query("DELETE FROM mfa_factors WHERE tenant_id = \(tenant) AND local_id = \(localID)")
        }
        try await query(
            """
            UPDATE action_codes SET used_at = \(now), used_reason = \(plan.revokeReason.rawValue)
            WHERE tenant_id = \(tenant) AND local_id = \(localID) AND used_at IS NULL AND kind <> ALL(\(StripPlan.keptCodeKinds.map(\.rawValue)))
            """)
        _ = try await revokeAll(user: user, reason: plan.revokeReason, now: now)
        count(.takeoverProtection, [Telemetry.takeoverTrigger(plan.revokeReason)])
    }

    /// Writes a code (and queues its email). An earlier unspent code of the same kind for the same
    /// user is retired first, as Firebase answers it `INVALID_OOB_CODE` once a newer one was sent;
    /// sign-in codes for an address with no account yet belong to no user and are all kept (the
    /// first completion creates the account, identity-toolkit.md §7 item 37). `restoreEmailVerified` is, for a
    /// recover code, whether the address it restores was verified before the change. A code being
    /// spent right now (its row locked, then the user's: the other lock order) is skipped rather
    /// than waited for, so issuing and spending never deadlock; it is being used up anyway.
    func insert(
        _ outgoing: OutgoingCode, restoreEmailVerified: Bool? = nil
    ) async throws {
        let code = outgoing.code
        // A revert code undoes its own enrolment: a later enrolment's code does not replace it.
        if let localID = code.localID, code.kind != .revertSecondFactorAddition {
            try await query(
                """
                UPDATE action_codes SET used_at = \(code.createdAt), used_reason = 'SUPERSEDED'
                WHERE code_hash IN (
                    SELECT code_hash FROM action_codes
                    WHERE tenant_id = \(tenant) AND local_id = \(localID) AND kind = \(code.kind.rawValue) AND used_at IS NULL
                    FOR UPDATE SKIP LOCKED)
                """)
        }
        try await query(
            """
            INSERT INTO action_codes (tenant_id, code_hash, kind, local_id, email, new_email, settings, lang, created_at, expires_at,
                restore_email_verified, enrollment_id)
            VALUES (\(tenant), \(PostgresAccountStore.hash(code.code)), \(code.kind.rawValue), \(code.localID), \(code.email), \(code.newEmail),
                \(code.settingsJSON)::jsonb, \(code.lang), \(code.createdAt), \(code.expiresAt), \(restoreEmailVerified), \(code.enrollmentID))
            """)
        if let email = outgoing.email {
            try await PostgresOutbox.enqueue(email, on: connection, logger: logger)
        }
    }

    func code(_ code: String, lock: Bool) async throws -> ActionCodeRecord? {
        let hash = PostgresAccountStore.hash(code)
        let rows =
            lock
            ? try await execute(Prepared.ActionCodeForUpdate(hash: hash))
            : try await execute(Prepared.ActionCode(hash: hash))
        return try await PostgresAccountStore.decodeCode(rows)
    }

    /// Spends `code` in the caller's transaction and returns it as it was before, in one round
    /// trip where the code was unspent; a spent or unknown code is read as it is (nil: unknown).
    /// The caller's checks come after, and a refusal rolls the spending back with the transaction.
    func spend(_ code: String, now: Date) async throws -> ActionCodeRecord? {
        let spent = try await execute(Prepared.ActionCodeSpend(hash: PostgresAccountStore.hash(code), now: now))
        if let unspent = try await PostgresAccountStore.decodeCode(spent) {
            return unspent
        }
        return try await self.code(code, lock: false)
    }

}
