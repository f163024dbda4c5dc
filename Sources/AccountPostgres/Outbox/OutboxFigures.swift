import AccountCore
package import Logging
import PostgresNIO

/// What waits in the outboxes, for the metrics scrape: one short statement over both tables'
/// pending rows (their partial indexes).
package enum OutboxFigures {
    /// A queue's pending messages and the age of the oldest, in seconds (0 when empty).
    package struct Queue: Sendable {
        package var name: String
        package var depth: Int
        package var oldestAge: Double
    }

    /// Both queues now; throws when the database does not answer.
    package static func current(_ database: ConnectionPool, logger: Logger) async throws -> [Queue] {
        let rows = try await database.query(
            """
            SELECT 'mail', count(*)::int8, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
            FROM email_outbox WHERE status = 'pending'
            UNION ALL
            SELECT 'sms', count(*)::int8, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
            FROM sms_outbox WHERE status = 'pending'
            """, logger: logger)
        return try rows.map { row in
            let (name, depth, age) = try row.decode((String, Int64, Double).self)
            return Queue(name: name, depth: Int(depth), oldestAge: max(0, age))
        }
    }
}
