public import AccountCore
import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore {
    /// Reference §3.3 and §4.17 in one transaction: the user row, then the session row, locked (at
    /// most 5 s, then 503); the MAC checked against the session's salt; then the generation rules.
    /// A concurrent refresh with the same token waits here and lands in the tolerated row.
    package func refresh(_ request: RefreshRequest) async throws -> RefreshResult {
        try await translating {
            try await client.withTransaction(logger: logger) { connection in
                // The lock timeout and the owner lookup share a round trip: set_config(…, true) is SET LOCAL.
                var owner: String?
                for try await (_, localID) in try await connection.query(
                    "SELECT set_config('lock_timeout', '5s', true), (SELECT local_id FROM sessions WHERE session_id = \(request.sessionID))",
                    logger: logger
                ).decode((String, String?).self) {
                    owner = localID
                }
                guard let owner else { throw AccountError(.invalidRefreshToken) }
                let user = try await Self.user(localID: owner, on: connection, logger: logger, lock: true)
                var session: SessionRecord?
                for try await row in try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT \(Self.sessionColumns) FROM sessions WHERE session_id = $1 FOR UPDATE",
                        binds: Self.binds(request.sessionID)
                    ),
                    logger: logger
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
                try await connection.query(
                    """
                    WITH session AS (
                        UPDATE sessions SET refresh_generation = \(session.generation), generation_issued_at = \(session.generationIssuedAt),
                            last_refresh_at = \(now), last_mint_at = \(mintAt),
                            user_agent = coalesce(\(request.userAgent), user_agent), ip_address = coalesce(\(request.ipAddress), ip_address)
                        WHERE session_id = \(session.sessionID)
                    )
                    UPDATE users SET last_refresh_at = \(now) WHERE tenant_id = '' AND local_id = \(user.localID)
                    """,
                    logger: logger
                )
                var refreshed = user
                refreshed.lastRefreshAt = now
                return .refreshed(refreshed, session, MintTicket(issuedAt: issuedAt, authTime: session.authTime))
            }
        }
    }
}
