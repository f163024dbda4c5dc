package import AccountCore
import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: AdminStore {
    package func usersPage(after: String?, limit: Int) async throws -> [UserRecord] {
        try await translating {
            let rows = try await database.query(
                """
                SELECT \(unescaped: Self.userColumns) WHERE u.tenant_id = \(tenant) AND u.local_id > \(after ?? "")
                ORDER BY u.local_id LIMIT \(limit)
                """,
                logger: logger
            )
            var users: [UserRecord] = []
            for row in rows { users.append(try Self.decodeUser(row)) }
            return users
        }
    }

    /// `accounts:query`: one statement counts, one reads the page; the identifiers and the email
    /// prefix are binds (a filter not asked for is bound as "match everything").
    package func query(_ query: UserQuery) async throws -> (count: Int, users: [UserRecord]) {
        try await translating {
            let byIdentifier = !query.emails.isEmpty || !query.localIDs.isEmpty || !query.phoneNumbers.isEmpty
            let emails = query.emails.map { $0.lowercased() }
            // LIKE's wildcards in the prefix match themselves.
            let pattern = query.emailPrefix.map {
                $0.lowercased().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                    .replacingOccurrences(of: "_", with: "\\_") + "%"
            }
            var count = 0
            for n in try await database.query(
                """
                SELECT count(*)::int FROM users u
                WHERE u.tenant_id = \(tenant)
                  AND (NOT \(byIdentifier) OR lower(u.email) = ANY(\(emails)) OR u.local_id = ANY(\(query.localIDs))
                       OR u.phone_number = ANY(\(query.phoneNumbers)))
                  AND (\(pattern)::text IS NULL OR lower(u.email) LIKE \(pattern))
                """,
                logger: logger
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
            let rows = try await database.query(
                """
                SELECT \(unescaped: Self.userColumns)
                WHERE u.tenant_id = \(tenant)
                  AND (NOT \(byIdentifier) OR lower(u.email) = ANY(\(emails)) OR u.local_id = ANY(\(query.localIDs))
                       OR u.phone_number = ANY(\(query.phoneNumbers)))
                  AND (\(pattern)::text IS NULL OR lower(u.email) LIKE \(pattern))
                ORDER BY \(unescaped: column) \(unescaped: direction), u.local_id LIMIT \(query.limit) OFFSET \(query.offset)
                """,
                logger: logger
            )
            var users: [UserRecord] = []
            for row in rows { users.append(try Self.decodeUser(row)) }
            return (count, users)
        }
    }

    package func audit(_ action: AuditAction, localID: String?, details: [String: String]) async throws {
        try await transaction { tx in try await tx.audit(action, localID: localID, details: details) }
    }

    package func auditEvents(localID: String?, limit: Int) async throws -> [AuditEvent] {
        try await translating {
            let rows = try await database.query(
                """
                SELECT extract(epoch FROM occurred_at)::float8, actor_type, actor, action, local_id, details::text FROM audit_events
                WHERE tenant_id = \(tenant) AND (\(localID)::text IS NULL OR local_id = \(localID))
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
