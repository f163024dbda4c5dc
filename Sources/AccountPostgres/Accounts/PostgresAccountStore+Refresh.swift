public import AccountCore
import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore {
    /// Reference §3.3 and §4.17, optimistically, in two round trips: read the session and its owner
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
        for row in try await database.execute(Prepared.SessionAndOwner(binds: Self.binds(request.sessionID)), logger: logger) {
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
            session.generation += 1
            session.generationIssuedAt = now
        case .tolerate:
            break
        case .reuse:
            try await revokeReused(session, user: user, now: now)
            return .reused
        }
        let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: user.validSince)
        var binds = PostgresBindings()
        binds.append(session.generation)
        binds.append(session.generationIssuedAt)
        binds.append(now)
        binds.append(mintAt)
        binds.append(request.userAgent)
        binds.append(request.ipAddress)
        binds.append(session.sessionID)
        binds.append(user.localID)
        binds.append(user.validSince)
        binds.append(generationRead)
        // A rotation the client will not see would turn its next try into reuse: none is written for
        // a request whose client has gone or was answered 503 (it retries with the same token).
        // Checked once the connection is leased: the lease itself may wait.
        let applied = try await database.withConnection { connection in
            try RequestScope.checkBeforeWriting()
            var applied = false
            for try await _ in try await connection.execute(Prepared.RefreshWrite(binds: binds), logger: logger) { applied = true }
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
        try await database.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE sessions SET revoked_at = \(now), revoke_reason = \(RevokeReason.refreshTokenReuse.rawValue)
                WHERE session_id = \(session.sessionID) AND revoked_at IS NULL
                """,
                logger: logger
            )
            try await Self.announce(.session(session.sessionID), on: connection, logger: logger)
            try await Self.audit(
                "sessions.revoke", localID: user.localID,
                details: ["reason": RevokeReason.refreshTokenReuse.rawValue, "sessions": session.sessionID], actor: .system,
                on: connection, logger: logger
            )
        }
    }
}
