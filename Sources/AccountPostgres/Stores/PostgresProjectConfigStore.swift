package import AccountCore
import Foundation
package import Logging
import PostgresNIO

/// The project configuration resource in PostgreSQL (mfa-phone-tenants.md §0.4): one JSON
/// document per tenant. A save is audited and announced on the revocation channel (`p:<tenant>`)
/// in its transaction, so every replica's cache drops it when it commits.
package struct PostgresProjectConfigStore: ProjectConfigStore, PostgresBacked {
    let base: PostgresStore

    package init(database: ConnectionPool, logger: Logger) {
        base = PostgresStore(database: database, logger: logger)
    }

    package func projectConfig(tenant: String) async throws -> JSONValue? {
        try await translating {
            try await onConnection { tx in
                for try await text in try await tx.query("SELECT document::text FROM project_config WHERE tenant_id = \(tenant)")
                    .decode(String.self)
                {
                    return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                }
                return nil
            }
        }
    }

    package func saveProjectConfig(_ document: JSONValue, tenant: String) async throws {
        let text = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        try await transaction { tx in
            try await tx.query(
                """
                INSERT INTO project_config (tenant_id, document, updated_at) VALUES (\(tenant), \(text)::jsonb, now())
                ON CONFLICT (tenant_id) DO UPDATE SET document = EXCLUDED.document, updated_at = EXCLUDED.updated_at
                """)
            try await tx.audit(.projectConfigUpdated, localID: nil, details: [:])
            try await tx.notify(.projectConfig(tenant))
        }
    }
}
