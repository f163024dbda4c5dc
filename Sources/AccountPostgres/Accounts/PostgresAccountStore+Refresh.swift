public import AccountCore
import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore {
    /// Reference §3.3 and §4.17 in one transaction: the user row, then the session row, locked (at
    /// most the pool's lock timeout, 5 s by default, then 503); the MAC checked against the
    /// session's salt; then the generation rules. A concurrent refresh with the same token waits
    /// here and lands in the tolerated row. Five round trips: BEGIN, user, session, writes, COMMIT.
    package func refresh(_ request: RefreshRequest) async throws -> RefreshResult {
        try await translating {
            try await client.withTransaction(logger: logger) { connection in
                var user: UserRecord?
                for try await row in try await connection.execute(
                    Prepared.UserBySessionForUpdate(binds: Self.binds(request.sessionID)), logger: logger)
                {
                    user = try Self.decodeUser(row)
                }
                var session: SessionRecord?
                for try await row in try await connection.execute(
                    Prepared.SessionForUpdate(binds: Self.binds(request.sessionID)), logger: logger
                ) {
                    session = try Self.decodeSession(row)
                }
                guard var session, request.verifyMAC(session.salt, session.keyID) else { throw AccountError(.invalidRefreshToken) }
                guard let user, !session.userDeleted else { throw AccountError(.userNotFound) }
                if user.disabled { throw AccountError(.userDisabled) }
                if session.revokedAt != nil || (session.expiresAt.map { $0 <= request.now } ?? false) {
                    throw AccountError(.tokenExpired)
                }
                let now = request.now
                if request.generation == session.generation {
                    session.generation += 1
                    session.generationIssuedAt = now
                } else if request.generation == session.generation - 1,
                    now.timeIntervalSince(session.generationIssuedAt) <= request.graceSeconds
                {
                    // Tolerated replay: the same current token is handed out again.
                } else {
                    try await connection.query(
                        """
                        UPDATE sessions SET revoked_at = \(now), revoke_reason = \(RevokeReason.refreshTokenReuse.rawValue)
                        WHERE session_id = \(session.sessionID)
                        """,
                        logger: logger
                    )
                    try await connection.query(
                        "SELECT pg_notify(\(Self.revocationChannel), \("s:" + session.sessionID))", logger: logger
                    )
                    try await Self.audit(
                        "sessions.revoke", localID: user.localID,
                        details: ["reason": RevokeReason.refreshTokenReuse.rawValue, "sessions": session.sessionID], actor: .system,
                        on: connection, logger: logger
                    )
                    return .reused
                }
                let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: user.validSince)
                // Both rows are already locked; one statement writes them.
                var binds = PostgresBindings()
                binds.append(session.generation)
                binds.append(session.generationIssuedAt)
                binds.append(now)
                binds.append(mintAt)
                binds.append(request.userAgent)
                binds.append(request.ipAddress)
                binds.append(session.sessionID)
                binds.append(user.localID)
                _ = try await connection.execute(Prepared.RefreshWrite(binds: binds), logger: logger)
                var refreshed = user
                refreshed.lastRefreshAt = now
                return .refreshed(refreshed, session, MintTicket(issuedAt: issuedAt, authTime: session.authTime))
            }
        }
    }
}
