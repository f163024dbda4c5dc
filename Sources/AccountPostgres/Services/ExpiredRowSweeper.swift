package import Foundation
package import Logging
import PostgresNIO
import ServiceLifecycle

/// Deletes rows whose purpose has passed (identity-toolkit.md §2.6, §2.7): used or expired action codes after
/// 7 days (kept that long so `EXPIRED_OOB_CODE` stays distinct from `INVALID_OOB_CODE`), revoked
/// sessions and deleted users' tombstones after 30 days, delivered or failed outbox rows after 7
/// days; abuse-limit buckets once full again, and password-failure counts once a new failure would
/// start afresh (`failureReset`) and no lock is in force; used custom tokens' hashes and IdP
/// nonces once their tokens have expired, pending IdP tokens after their hour, redirect flows as
/// soon as they expire (used or not: either way the callback answers "unknown or expired"). Runs
/// every five minutes in small batches so it never holds long locks, and so a flow, which lives ten
/// minutes, is gone within fifteen; every replica may run it.
package struct ExpiredRowSweeper: Service {
    private let database: ConnectionPool
    private let logger: Logger
    private let interval: Duration
    private let failureReset: TimeInterval

    /// Creates the sweeper; `failureReset` is the lockout's reset period (`ACCOUNTD_LOCKOUT_RESET_HOURS`).
    package init(database: ConnectionPool, logger: Logger, interval: Duration = .seconds(300), failureReset: TimeInterval = 12 * 3600) {
        self.database = database
        self.logger = logger
        self.interval = interval
        self.failureReset = failureReset
    }

    package func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let removed = try await sweepOnce()
                if removed > 0 { logger.info("swept expired rows", metadata: ["rows": "\(removed)"]) }
            } catch {
                logger.warning("expired-row sweep failed; will retry", metadata: ["error": "\(String(describing: error).prefix(300))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One pass over every table; returns how many rows went.
    @discardableResult
    package func sweepOnce(now: Date = Date()) async throws -> Int {
        let statements: [PostgresQuery] = [
            """
            DELETE FROM action_codes WHERE code_hash IN (SELECT code_hash FROM action_codes
              WHERE coalesce(used_at, expires_at) < \(now) - interval '7 days' LIMIT 5000)
            """,
            """
            DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM sessions
              WHERE revoked_at < \(now) - interval '30 days' LIMIT 5000)
            """,
            """
            DELETE FROM email_outbox WHERE id IN (SELECT id FROM email_outbox
              WHERE status <> 'pending' AND created_at < \(now) - interval '7 days' LIMIT 5000)
            """,
            // A bucket row is forgotten once it is full again; a failure count once it would start
            // afresh anyway and holds no lock.
            """
            DELETE FROM rate_limits WHERE (bucket, key) IN (SELECT bucket, key FROM rate_limits
              WHERE expires_at < \(now) LIMIT 5000)
            """,
            """
            DELETE FROM password_failures WHERE (key, class) IN (SELECT key, class FROM password_failures
              WHERE last_failure_at < \(now) - make_interval(secs => \(failureReset))
                AND (locked_until IS NULL OR locked_until < \(now)) LIMIT 5000)
            """,
            // A used custom token's hash, once the token itself could no longer be accepted.
            """
            DELETE FROM used_custom_tokens WHERE token_hash IN (SELECT token_hash FROM used_custom_tokens
              WHERE expires_at < \(now) LIMIT 5000)
            """,
            // Used IdP nonces past their tokens' expiry, pending tokens past their hour, flows past
            // their ten minutes.
            """
            DELETE FROM idp_used_nonces WHERE nonce_key IN (SELECT nonce_key FROM idp_used_nonces WHERE expires_at < \(now) LIMIT 5000)
            """,
            """
            DELETE FROM idp_pending WHERE token_hash IN (SELECT token_hash FROM idp_pending WHERE expires_at < \(now) LIMIT 5000)
            """,
            """
            DELETE FROM idp_flows WHERE state_hash IN (SELECT state_hash FROM idp_flows WHERE expires_at < \(now) LIMIT 5000)
            """,
            // Phone sessions and proofs a week past their end: until then a late answer can still
            // say SESSION_EXPIRED rather than INVALID_SESSION_INFO (mfa-phone-tenants.md §0.3).
            """
            DELETE FROM phone_sessions WHERE session_hash IN (SELECT session_hash FROM phone_sessions
              WHERE coalesce(used_at, expires_at) < \(now) - interval '7 days' LIMIT 5000)
            """,
            """
            DELETE FROM temporary_proofs WHERE proof_hash IN (SELECT proof_hash FROM temporary_proofs
              WHERE coalesce(used_at, expires_at) < \(now) - interval '7 days' LIMIT 5000)
            """,
            """
            DELETE FROM sms_outbox WHERE id IN (SELECT id FROM sms_outbox
              WHERE status <> 'pending' AND created_at < \(now) - interval '7 days' LIMIT 5000)
            """,
            // Second factors' one-time rows (§0.3), a week past their end as phone sessions.
            """
            DELETE FROM mfa_pending WHERE pending_hash IN (SELECT pending_hash FROM mfa_pending
              WHERE coalesce(used_at, expires_at) < \(now) - interval '7 days' LIMIT 5000)
            """,
            """
            DELETE FROM totp_enrollments WHERE session_hash IN (SELECT session_hash FROM totp_enrollments
              WHERE coalesce(used_at, expires_at) < \(now) - interval '7 days' LIMIT 5000)
            """,
        ]
        var total = 0
        for statement in statements {
            while true {
                var removed = 0
                for count in try await database.query(
                    PostgresQuery(
                        unsafeSQL: "WITH gone AS (\(statement.sql) RETURNING 1) SELECT count(*)::int FROM gone", binds: statement.binds),
                    logger: logger
                ).decode(Int.self) {
                    removed = count
                }
                total += removed
                if removed < 5000 { break }
            }
        }
        return total
    }
}
