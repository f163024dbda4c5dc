public import AccountCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: AdminStore {
    package func usersPage(after: String?, limit: Int) async throws -> [UserRecord] {
        try await translating {
            var binds = PostgresBindings()
            binds.append(after ?? "")
            binds.append(limit)
            let rows = try await database.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(Self.userColumns) WHERE u.tenant_id = '' AND u.local_id > $1 ORDER BY u.local_id LIMIT $2",
                    binds: binds),
                logger: logger
            )
            var users: [UserRecord] = []
            for row in rows { users.append(try Self.decodeUser(row)) }
            return users
        }
    }

    package func query(_ query: UserQuery) async throws -> (count: Int, users: [UserRecord]) {
        try await translating {
            var binds = PostgresBindings()
            var conditions: [String] = []
            if !query.emails.isEmpty || !query.localIDs.isEmpty || !query.phoneNumbers.isEmpty {
                binds.append(query.emails.map { $0.lowercased() })
                binds.append(query.localIDs)
                binds.append(query.phoneNumbers)
                conditions.append("(lower(u.email) = ANY($1) OR u.local_id = ANY($2) OR u.phone_number = ANY($3))")
            }
            if let prefix = query.emailPrefix {
                binds.append(
                    prefix.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                        .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%")
                conditions.append("lower(u.email) LIKE $\(binds.count)")
            }
            let filter = (["u.tenant_id = ''"] + conditions).joined(separator: " AND ")
            var count = 0
            for n in try await database.query(
                PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM users u WHERE \(filter)", binds: binds), logger: logger
            ).decode(Int.self) {
                count = n
            }
            let column =
                switch query.sortBy {
                case .userID: "u.local_id"
                case .createdAt: "u.created_at"
                case .lastLoginAt: "u.last_login_at"
                case .userEmail: "u.email"
                case .name: "u.display_name"
                }
            let direction = query.descending ? "DESC NULLS LAST" : "ASC NULLS LAST"
            binds.append(query.limit)
            binds.append(query.offset)
            let rows = try await database.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT \(Self.userColumns) WHERE \(filter) ORDER BY \(column) \(direction), u.local_id LIMIT $\(binds.count - 1) OFFSET $\(binds.count)",
                    binds: binds
                ),
                logger: logger
            )
            var users: [UserRecord] = []
            for row in rows { users.append(try Self.decodeUser(row)) }
            return (count, users)
        }
    }

    package func auditEvents(localID: String?, limit: Int) async throws -> [AuditEvent] {
        try await translating {
            let rows = try await database.query(
                """
                SELECT extract(epoch FROM occurred_at)::float8, actor_type, actor, action, local_id, details::text FROM audit_events
                WHERE tenant_id = '' AND (\(localID)::text IS NULL OR local_id = \(localID))
                ORDER BY occurred_at DESC, id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            var events: [AuditEvent] = []
            for (at, type, actor, action, id, details) in try rows.decode((Double, String, String, String, String?, String).self) {
                events.append(AuditEvent(occurredAt: at, actorType: type, actor: actor, action: action, localID: id, details: details))
            }
            return events
        }
    }

}
