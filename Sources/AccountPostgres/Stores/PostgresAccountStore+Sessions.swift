package import AccountCore
package import Foundation
import Logging
import PostgresNIO

/// Sessions: sign-in, refresh, revocation and the reads of the token checks.
extension PostgresAccountStore {
    package func sessionState(sessionID: String) async throws -> SessionState? {
        try await translating {
            let rows = try await database.execute(Prepared.SessionState(sessionID: sessionID), logger: logger)
            for row in rows {
                let (localID, live, exists, disabled, validSince) = try row.decode((String, Bool, Bool, Bool, Int64).self)
                return SessionState(localID: localID, sessionLive: live, userExists: exists, userDisabled: disabled, validSince: validSince)
            }
            return nil
        }
    }

    package func sessions(localID: String, includeRevoked: Bool, limit: Int, before: SessionCursor?) async throws -> [SessionRecord] {
        try await translating {
            // The first page starts after every session: the end of time, and a session id above any.
            let createdBefore = before?.createdAt ?? Date.distantFuture
            let idBefore = before?.sessionID ?? String(UnicodeScalar(0x10FFFF)!)
            let rows = try await database.query(
                """
                SELECT \(unescaped: Self.sessionColumns) FROM sessions
                WHERE tenant_id = \(tenant) AND local_id = \(localID) AND (\(includeRevoked) OR revoked_at IS NULL)
                  AND (created_at, session_id) < (\(createdBefore), \(idBefore))
                ORDER BY created_at DESC, session_id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            var sessions: [SessionRecord] = []
            for row in rows { sessions.append(try Self.decodeSession(row)) }
            return sessions
        }
    }

    /// Optimistic first, as the refresh is: ``signInWrite(_:as:now:on:logger:)`` applies only if
    /// the user is still enabled with the credential version and `valid_since` the caller read (the
    /// password was verified against that version; the ID token's `iat` is computed from that
    /// `valid_since`). That is 1 round trip instead of 4. The token's other claims come from the
    /// caller's read, as a refresh's come from its unlocked read. When the write finds the user
    /// changed, or an imported hash is being upgraded, the locked transaction decides, names the
    /// refusal, and then runs the same write under the lock.
    package func startSession(
        for read: UserRecord, upgradedPassword: StoredPassword?, session: NewSession, now: Date
    ) async throws -> (UserRecord, MintTicket) {
        try await translating {
            if upgradedPassword == nil,
                let ticket = try await onConnection({ tx in
                    try RequestScope.checkBeforeWriting()
                    return try await tx.signInWrite(session, as: read, now: now)
                })
            {
                var signedIn = read
                signedIn.lastLoginAt = now
                return (signedIn, ticket)
            }
            return try await inTransaction { tx in
                guard let user = try await tx.user(localID: read.localID, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                // Disabling also moves the credential version (it revokes): say which it was.
                if user.disabled { throw AccountError(.userDisabled) }
                if read.credentialVersion != user.credentialVersion || user.password == nil {
                    throw AccountError(.invalidPassword)
                }
                // The row is locked and only these fields change: no need to read it back.
                var signedIn = user
                if let upgradedPassword, let credential = user.password {
                    // Same credential version: the old hash is swapped for a current native one, not a change.
                    try await tx.writePassword(
                        upgradedPassword, localID: user.localID, now: credential.updatedAt)
                    signedIn.password = PasswordCredential(stored: upgradedPassword, updatedAt: credential.updatedAt)
                }
                // What the write re-checks was just checked under the lock, so it applies.
                guard let ticket = try await tx.signInWrite(session, as: user, now: now) else {
                    throw AccountError(.unavailable, "the sign-in's write did not apply under the user's lock")
                }
                signedIn.lastLoginAt = now
                return (signedIn, ticket)
            }
        }
    }

    package func revokeSessions(localID: String, sessionIDs: [String]?, reason: RevokeReason, now: Date) async throws -> (
        revoked: [String], validSince: Int64
    ) {
        try await transaction { tx in
            guard let user = try await tx.user(localID: localID, lock: true) else {
                throw AccountError(.userNotFound)
            }
            guard let sessionIDs else {
                return try await tx.revokeAll(user: user, reason: reason, now: now)
            }
            let owned = try await tx.query(
                "SELECT session_id FROM sessions WHERE tenant_id = \(tenant) AND local_id = \(localID) AND session_id = ANY(\(sessionIDs)) FOR UPDATE"
            )
            var ownedIDs = Set<String>()
            for try await id in owned.decode(String.self) { ownedIDs.insert(id) }
            if let foreign = sessionIDs.first(where: { !ownedIDs.contains($0) }) {
                throw AccountError.sessionNotFound(foreign)
            }
            let rows = try await tx.query(
                """
                UPDATE sessions SET revoked_at = \(now), revoke_reason = \(reason.rawValue)
                WHERE session_id = ANY(\(sessionIDs)) AND revoked_at IS NULL RETURNING session_id
                """)
            var revoked: [String] = []
            for try await id in rows.decode(String.self) { revoked.append(id) }
            for id in revoked { try await tx.announce(.session(id)) }
            tx.count(.sessionsRevoked, [reason.rawValue], by: revoked.count)
            try await tx.audit(
                .sessionsRevoked, localID: localID,
                details: ["reason": reason.rawValue, "sessions": revoked.sorted().joined(separator: ",")])
            return (revoked.sorted(), user.validSince)
        }
    }

    /// The binds of ``Prepared/SessionInsert`` (`$1`–`$11`, which ``Prepared/SignInWrite`` shares)
    /// and the `iat` and `auth_time` of the session's first ID token.
    /// The `iat` and `auth_time` of a new session's first ID token (`iat` = max(now's second, V),
    /// `auth_time` = iat), and the mint instant recorded with it.
    static func firstMint(now: Date, validSince: Int64) -> (MintTicket, mintAt: Date) {
        let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: validSince)
        return (MintTicket(issuedAt: issuedAt, authTime: issuedAt), mintAt)
    }

    package func recordMint(sessionID: String, localID: String, now: Date) async throws -> MintTicket {
        try await transaction { tx in
            guard let user = try await tx.user(localID: localID, lock: true) else {
                throw AccountError(.userNotFound)
            }
            var authTime: Int64?
            for try await (time, live) in try await tx.query(
                """
                SELECT auth_time, revoked_at IS NULL AND NOT user_deleted FROM sessions
                WHERE session_id = \(sessionID) AND local_id = \(localID) FOR UPDATE
                """
            ).decode((Int64, Bool).self) where live {
                authTime = time
            }
            guard let authTime else { throw AccountError(.tokenExpired) }
            let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: user.validSince)
            try await tx.query("UPDATE sessions SET last_mint_at = \(mintAt) WHERE session_id = \(sessionID)")
            return MintTicket(issuedAt: issuedAt, authTime: authTime)
        }
    }

    /// identity-toolkit.md §3.3 and §4.17, optimistically, in two round trips: read the session and its owner
    /// (one statement, no locks), check the MAC against the session's salt, apply the generation
    /// rules, then write with one statement that locks the owner, then the session, and applies
    /// only if neither changed in what the decision rests on (the owner enabled with the same
    /// `valid_since`, the session live at the generation read). When another writer came first (a
    /// concurrent refresh with the same token, a revocation, a disable), the refresh reads again:
    /// a concurrent refresh lands in the tolerated row, a revoked session answers TOKEN_EXPIRED.
    /// The write waits for row locks at most the pool's lock timeout (5 s by default, then 503).
    package func refresh(_ request: RefreshRequest) async throws -> RefreshResult {
        try await translating {
            for _ in 0..<Self.refreshAttempts {
                if let result = try await refreshOnce(request) { return result }
            }
            // Every attempt lost to another writer: the session is being refreshed or changed faster
            // than this request can follow.
            throw AccountError(.unavailable, "The account is busy, retry shortly.")
        }
    }

    /// How many read-decide-write rounds a refresh makes before answering busy. Each lost round
    /// means another writer changed the session or its owner in between.
    static let refreshAttempts = 4

    /// One round; nil when the write found the rows changed since the read.
    private func refreshOnce(_ request: RefreshRequest) async throws -> RefreshResult? {
        var user: UserRecord?
        var session: SessionRecord?
        for row in try await database.execute(Prepared.SessionAndOwner(sessionID: request.sessionID), logger: logger) {
            session = try Self.decodeSession(row, from: Prepared.SessionAndOwner.sessionColumn)
            user = try row.makeRandomAccess()[0].decode(String?.self) == nil ? nil : try Self.decodeUser(row)
        }
        let decision = try RefreshRules.decide(
            presented: request.generation, macValid: session.map { request.verifyMAC($0.salt, $0.keyID) } ?? false,
            session: session, user: user, now: request.now, graceSeconds: request.graceSeconds)
        guard var session, let user else { throw AccountError(.invalidRefreshToken) }  // decide threw already
        let now = request.now
        let generationRead = session.generation
        switch decision {
        case .rotate:
            session.generation = request.generation + 1
            session.generationIssuedAt = now
        case .tolerate:
            break
        case .reuse:
            try await revokeReused(session, user: user, now: now)
            return .reused
        }
        let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: user.validSince)
        let write = Prepared.RefreshWrite(
            tenant: tenant, session: session, generationRead: generationRead, owner: user, now: now, mintAt: mintAt,
            userAgent: request.userAgent, ipAddress: request.ipAddress)
        // A rotation the client will not see would turn its next try into reuse: none is written for
        // a request whose client has gone or was answered 503 (it retries with the same token).
        // Checked once the connection is leased: the lease itself may wait.
        let applied = try await onConnection { tx in
            try RequestScope.checkBeforeWriting()
            var applied = false
            for try await _ in try await tx.execute(write) { applied = true }
            return applied
        }
        guard applied else { return nil }
        var refreshed = user
        refreshed.lastRefreshAt = now
        return .refreshed(refreshed, session, MintTicket(issuedAt: issuedAt, authTime: session.authTime))
    }

    /// A token older than the tolerated one was presented: the session is revoked, whatever
    /// happened to it since the read (a stale token stays stale).
    private func revokeReused(_ session: SessionRecord, user: UserRecord, now: Date) async throws {
        try await inTransaction { tx in
            let revoked = try await tx.query(
                """
                UPDATE sessions SET revoked_at = \(now), revoke_reason = \(RevokeReason.refreshTokenReuse.rawValue)
                WHERE session_id = \(session.sessionID) AND revoked_at IS NULL RETURNING 1
                """)
            var count = 0
            for try await _ in revoked { count += 1 }
            tx.count(.refreshReuse)
            tx.count(.sessionsRevoked, [RevokeReason.refreshTokenReuse.rawValue], by: count)
            try await tx.announce(.session(session.sessionID))
            try await tx.audit(
                .sessionsRevoked, localID: user.localID,
                details: ["reason": RevokeReason.refreshTokenReuse.rawValue, "sessions": session.sessionID], actor: .system)
        }
    }
}

extension StoreTransaction {
    /// ``Prepared/SignInWrite`` for `user` as read: `last_login_at` and the new session, written
    /// only if the user is still enabled with the same `valid_since` and credential version. The
    /// session's first `iat` and `auth_time` when it wrote; nil when it wrote nothing.
    func signInWrite(_ session: NewSession, as user: UserRecord, now: Date)
        async throws -> MintTicket?
    {
        let (ticket, mintAt) = PostgresAccountStore.firstMint(now: now, validSince: user.validSince)
        var applied = false
        let write = try Prepared.SignInWrite(session, user: user, tenant: tenant, now: now, ticket: ticket, mintAt: mintAt)
        for try await _ in try await execute(write) { applied = true }
        if applied { count(.sessionsCreated, [Telemetry.providerLabel(session.signInProvider)]) }
        return applied ? ticket : nil
    }
}

extension PostgresAccountStore {
    /// Whether a live session still holds a refresh token of the first format (migration 0009):
    /// `ACCOUNTD_REFRESH_ACCEPT_V1=auto` accepts that format only then.
    package func hasVersionOneRefreshTokens() async throws -> Bool {
        try await translating {
            for row in try await database.query(
                """
                SELECT EXISTS (SELECT FROM sessions WHERE token_format = 1 AND revoked_at IS NULL AND NOT user_deleted
                               AND (expires_at IS NULL OR expires_at > now()))
                """, logger: logger)
            {
                return try row.decode(Bool.self)
            }
            return false
        }
    }
}
