package import AccountCore
import Foundation
package import Logging
import PostgresNIO

/// Provider configurations in PostgreSQL (federation-and-limits.md §B.4): secrets sealed under
/// the key-encryption key, bound to the project, the provider and the field; every change audited
/// by field name, never value. Every change is announced on the revocation channel (`c:<id>`) in
/// its transaction, so each replica's ``IdPConfigCache`` drops it when it commits.
package struct PostgresIdPConfigStore: IdPConfigStore, PostgresBacked {
    let base: PostgresStore
    let sealer: any SecretSealing
    let project: String

    /// Creates the store for `project`'s configs.
    package init(database: ConnectionPool, logger: Logger, sealer: any SecretSealing, project: String) {
        base = PostgresStore(database: database, logger: logger)
        self.sealer = sealer
        self.project = project
    }

    private static let columns = """
        provider_id, display_name, enabled, client_id, issuer, code_flow, client_secret_sealed, apple::text, apple_key_sealed,
        options::text, created_at, updated_at
        """

    package func idpConfig(_ providerID: String) async throws -> IdPConfig? {
        try await translating {
            try await decode(
                database.query(
                    "SELECT \(unescaped: Self.columns) FROM idp_configs WHERE tenant_id = \(tenant) AND provider_id = \(providerID)",
                    logger: logger)
            ).first
        }
    }

    package func idpConfigs(defaultSupported: Bool, after: String?, limit: Int) async throws -> [IdPConfig] {
        try await translating {
            try await decode(
                database.query(
                    """
                    SELECT \(unescaped: Self.columns) FROM idp_configs
                    WHERE tenant_id = \(tenant) AND (provider_id LIKE 'oidc.%') <> \(defaultSupported) AND provider_id > \(after ?? "")
                    ORDER BY provider_id LIMIT \(limit)
                    """,
                    logger: logger))
        }
    }

    package func createIdPConfig(_ config: IdPConfig) async throws {
        try await write(config, action: .idpConfigCreated) { tx, row in
            var created = false
            for try await _ in try await tx.query(
                """
                INSERT INTO idp_configs (tenant_id, provider_id, display_name, enabled, client_id, issuer, code_flow, client_secret_sealed,
                    apple, apple_key_sealed, kek_id, options, created_at, updated_at)
                VALUES (\(tenant), \(config.providerID), \(config.displayName), \(config.enabled), \(config.clientID), \(config.issuer),
                    \(config.codeFlow), \(row.secret), \(row.apple)::jsonb, \(row.appleKey), \(sealer.kekID), \(row.options)::jsonb,
                    \(config.createdAt), \(config.updatedAt))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            {
                created = true
            }
            guard created else {
                throw AccountError(.configurationExists, "The configuration already exists with config_id: \(config.providerID)")
            }
        }
    }

    package func updateIdPConfig(_ config: IdPConfig) async throws {
        try await write(config, action: .idpConfigUpdated) { tx, row in
            var updated = false
            for try await _ in try await tx.query(
                """
                UPDATE idp_configs SET display_name = \(config.displayName), enabled = \(config.enabled), client_id = \(config.clientID),
                    issuer = \(config.issuer), code_flow = \(config.codeFlow), client_secret_sealed = \(row.secret),
                    apple = \(row.apple)::jsonb, apple_key_sealed = \(row.appleKey), kek_id = \(sealer.kekID),
                    options = \(row.options)::jsonb, updated_at = \(config.updatedAt)
                WHERE tenant_id = \(tenant) AND provider_id = \(config.providerID) RETURNING 1
                """)
            {
                updated = true
            }
            guard updated else { throw AccountError(.configurationNotFound) }
        }
    }

    package func deleteIdPConfig(_ providerID: String) async throws -> Bool {
        try await transaction { tx in
            var deleted = false
            for try await _ in try await tx.query(
                "DELETE FROM idp_configs WHERE tenant_id = \(tenant) AND provider_id = \(providerID) RETURNING 1")
            {
                deleted = true
            }
            if deleted {
                try await tx.audit(.idpConfigDeleted, localID: nil, details: ["providerId": providerID])
                try await tx.notify(.providerConfig(providerID))
            }
            return deleted
        }
    }

    // MARK: Rows

    /// What a config becomes in its row: sealed secrets and JSON columns.
    private struct Row {
        var secret: Data?
        var apple: String?
        var appleKey: Data?
        var options: String
    }

    private func write(_ config: IdPConfig, action: AuditAction, _ body: (StoreTransaction, Row) async throws -> Void) async throws {
        let context = { (field: String) in "\(project)|\(config.providerID)|\(field)" }
        let row = Row(
            secret: try config.clientSecret.map { Data(try sealer.seal(Array($0.utf8), context: context("clientSecret"))) },
            apple: try config.apple.map { apple in
                String(
                    decoding: try JSONEncoder().encode(AppleRow(bundleIDs: apple.bundleIDs, teamID: apple.teamID, keyID: apple.keyID)),
                    as: UTF8.self)
            },
            appleKey: try config.apple?.privateKey.map { Data(try sealer.seal(Array($0.utf8), context: context("applePrivateKey"))) },
            options: String(decoding: try JSONEncoder().encode(config.options), as: UTF8.self))
        try await transaction { tx in
            try await body(tx, row)
            // Which fields an admin set, never their values.
            var fields = ["clientId", "enabled"]
            if config.issuer != nil { fields.append("issuer") }
            if config.clientSecret != nil { fields.append("clientSecret") }
            if config.apple != nil { fields.append("appleSignInConfig") }
            try await tx.audit(
                action, localID: nil, details: ["providerId": config.providerID, "fields": fields.joined(separator: ",")])
            try await tx.notify(.providerConfig(config.providerID))
        }
    }

    private struct AppleRow: Codable {
        var bundleIDs: [String]
        var teamID: String?
        var keyID: String?
    }

    private func decode(_ rows: [PostgresRow]) throws -> [IdPConfig] {
        try rows.map { row in
            let (id, display, enabled, clientID, issuer, codeFlow, sealedSecret, apple, sealedKey, options, created, updated) =
                try row.decode(
                    (String, String?, Bool, String, String?, Bool, Data?, String?, Data?, String, Date, Date).self)
            let context = { (field: String) in "\(project)|\(id)|\(field)" }
            let secret = try sealedSecret.map {
                String(decoding: try sealer.open(Array($0), context: context("clientSecret")), as: UTF8.self)
            }
            var appleSettings: AppleSignIn?
            if let apple, let stored = try? JSONDecoder().decode(AppleRow.self, from: Data(apple.utf8)) {
                appleSettings = AppleSignIn(
                    bundleIDs: stored.bundleIDs, teamID: stored.teamID, keyID: stored.keyID,
                    privateKey: try sealedKey.map {
                        String(decoding: try sealer.open(Array($0), context: context("applePrivateKey")), as: UTF8.self)
                    })
            }
            return IdPConfig(
                providerID: id, displayName: display, enabled: enabled, clientID: clientID, issuer: issuer, codeFlow: codeFlow,
                clientSecret: secret, apple: appleSettings,
                options: (try? JSONDecoder().decode(IdPOptions.self, from: Data(options.utf8))) ?? IdPOptions(), createdAt: created,
                updatedAt: updated)
        }
    }
}
