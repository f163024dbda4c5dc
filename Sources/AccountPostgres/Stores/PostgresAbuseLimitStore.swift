package import AccountCore
package import Foundation
package import Logging
import PostgresNIO

/// The abuse limits in PostgreSQL (federation-and-limits.md §E.3), shared by every replica. Every
/// call is one autocommit statement on a pooled connection: no user row is ever locked here.
package struct PostgresAbuseLimitStore: AbuseLimitStore, PostgresBacked {
    /// Its tenant is the one whose accounts ``passwordPrecheck(email:emailKey:address:addressKey:bucket:since:now:)`` looks at.
    let base: PostgresStore

    /// Creates the store over a running database.
    package init(database: ConnectionPool, logger: Logger, tenant: String = "") {
        base = PostgresStore(database: database, logger: logger, tenant: tenant)
    }

    package func consume(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval? {
        try await translating {
            let key = Data(key)
            let period = bucket.period
            let tolerance = bucket.tolerance
            // GCRA in one statement: the row moves its theoretical arrival time on by one period
            // unless that would run more than the tolerance ahead of now; no row back means refused.
            let rows = try await database.query(
                """
                INSERT INTO rate_limits AS r (bucket, key, tat, expires_at)
                VALUES (\(name), \(key), \(now) + make_interval(secs => \(period)), \(now) + make_interval(secs => \(period + tolerance)))
                ON CONFLICT (bucket, key) DO UPDATE
                   SET tat = greatest(r.tat, \(now)) + make_interval(secs => \(period)),
                       expires_at = greatest(r.tat, \(now)) + make_interval(secs => \(period + tolerance))
                 WHERE greatest(r.tat, \(now)) - \(now) <= make_interval(secs => \(tolerance))
                RETURNING true
                """,
                logger: logger
            )
            for _ in rows { return nil }
            return try await peek(name, bucket, key: Array(key), now: now) ?? bucket.period
        }
    }

    package func peek(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval? {
        try await translating {
            let rows = try await database.query(
                """
                SELECT extract(epoch FROM greatest(tat, \(now)) - \(now))::float8 FROM rate_limits
                WHERE bucket = \(name) AND key = \(Data(key))
                """,
                logger: logger
            )
            for ahead in try rows.decode(Double.self) {
                // Allowed while the arrival time runs at most the tolerance ahead; else free again once
                // it is back within it.
                return ahead <= bucket.tolerance ? nil : ahead - bucket.tolerance
            }
            return nil
        }
    }

    package func recordFailure(key: [UInt8], network: NetworkClass, now: Date, resetSeconds: TimeInterval) async throws -> Int {
        try await translating {
            let rows = try await database.query(
                """
                INSERT INTO password_failures AS f (key, class, failures, last_failure_at) VALUES (\(Data(key)), \(network.rawValue), 1, \(now))
                ON CONFLICT (key, class) DO UPDATE
                   SET failures = CASE WHEN f.last_failure_at < \(now) - make_interval(secs => \(resetSeconds)) THEN 1 ELSE f.failures + 1 END,
                       last_failure_at = \(now)
                RETURNING failures
                """,
                logger: logger
            )
            for failures in try rows.decode(Int32.self) { return Int(failures) }
            return 0
        }
    }

    package func lock(key: [UInt8], network: NetworkClass, until: Date, failures: Int) async throws {
        try await translating {
            // 'infinity' stands for the hard limit's lock (Date.distantFuture on the way in and out).
            try await database.query(
                """
                WITH locked AS (
                    UPDATE password_failures SET locked_until = greatest(coalesce(locked_until, \(until)), \(until))
                    WHERE key = \(Data(key)) AND class = \(network.rawValue)
                    RETURNING key
                )
                INSERT INTO audit_events (actor_type, actor, action, local_id, details)
                SELECT 'system', 'system', \(AuditAction.accountLocked.rawValue), NULL,
                       jsonb_build_object('key', encode(key, 'hex'), 'class', \(network.rawValue), 'failures', \(failures),
                                          'lockedUntil', \(until)::text)
                FROM locked
                """,
                logger: logger
            )
        }
    }

    @discardableResult
    package func clearFailures(key: [UInt8], networks: [NetworkClass]) async throws -> Bool {
        try await translating {
            let rows = try await database.query(
                "DELETE FROM password_failures WHERE key = \(Data(key)) AND class = ANY(\(networks.map(\.rawValue))) RETURNING true",
                logger: logger
            )
            var cleared = false
            for _ in rows { cleared = true }
            return cleared
        }
    }

    package func passwordPrecheck(
        email: String, emailKey: [UInt8], address: String?, addressKey: [UInt8]?, bucket: (name: String, size: RateBucket)?,
        since: Date, now: Date
    ) async throws -> PasswordPrecheck {
        try await translating {
            let statement = PasswordPrecheckStatement(
                binds: try {
                    var binds = PostgresBindings()
                    binds.append(tenant)
                    binds.append(email)
                    binds.append(address)
                    binds.append(since)
                    binds.append(now)
                    binds.append(bucket?.name)
                    try binds.append(addressKey.map { Data($0) })
                    try binds.append(Data(emailKey))
                    binds.append(RevokeReason.disowned.map(\.rawValue))
                    return binds
                }())
            let tolerance = bucket?.size.tolerance ?? 0
            for row in try await database.execute(statement, logger: logger) {
                let (network, ahead, hasFailures, lockedUntil) = try row.decode((String, Double?, Bool, Date?).self)
                let wait = ahead.flatMap { $0 <= tolerance ? nil : $0 - tolerance }
                return PasswordPrecheck(
                    network: NetworkClass(rawValue: network) ?? .unknown, addressWait: bucket == nil ? nil : wait, hasFailures: hasFailures,
                    lockedUntil: lockedUntil)
            }
            return PasswordPrecheck(network: .unknown, addressWait: nil, hasFailures: false, lockedUntil: nil)
        }
    }
}

/// Everything a password attempt is judged by before hashing, in one prepared statement (every
/// sign-in runs it: planned once per connection). `$1` tenant, `$2` lower-case email, `$3` the
/// client's address or null, `$4` since when a session's activity makes the address known, `$5`
/// now, `$6` the address bucket's name or null, `$7` the address's bucket key or null, `$8` the
/// email's failure key, `$9` the revoke reasons whose sessions prove nothing (decision 15). One row: the class, the seconds the bucket's arrival time runs ahead (null:
/// no row), whether the class has failures, its lock.
struct PasswordPrecheckStatement: PreparedQuery {
    static let sql = """
        WITH network AS (
            SELECT CASE WHEN $3::text IS NOT NULL AND EXISTS (
                SELECT FROM users u JOIN sessions s ON s.tenant_id = u.tenant_id AND s.local_id = u.local_id
                WHERE u.tenant_id = $1 AND lower(u.email) = $2::text
                  AND greatest(s.created_at, coalesce(s.last_refresh_at, s.created_at)) > $4::timestamptz
                  AND s.ip_address IS NOT NULL
                  AND (s.revoke_reason IS NULL OR s.revoke_reason <> ALL($9::text[]))
                  AND (s.ip_address = $3::text
                       OR (position(':' IN $3::text) > 0 AND position(':' IN s.ip_address) > 0
                           AND network(set_masklen(s.ip_address::inet, 64)) = network(set_masklen($3::inet, 64))))
            ) THEN 'known' ELSE 'unknown' END AS class
        )
        SELECT n.class,
               (SELECT extract(epoch FROM greatest(r.tat, $5::timestamptz) - $5::timestamptz)::float8 FROM rate_limits r
                 WHERE r.bucket = $6::text AND r.key = $7::bytea),
               f.failures IS NOT NULL, f.locked_until
        FROM network n LEFT JOIN password_failures f ON f.key = $8::bytea AND f.class = n.class
        """
    let binds: PostgresBindings
}
