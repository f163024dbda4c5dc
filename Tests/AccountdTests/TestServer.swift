import AccountPostgres
import AccountTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging

@testable import accountd

/// A configuration for tests: a demo project with explicit keys, tokens and key-encryption key.
func testConfiguration(port: Int = 0) -> Configuration {
    Configuration(
        databaseURL: nil,
        host: "127.0.0.1",
        port: port,
        projectID: "demo-test",
        apiKeys: ["test-api-key"],
        adminTokens: ["test-admin-token": "ops"],
        authorizedDomains: ["localhost", "example.com"],
        keyEncryptionKey: Array(repeating: 7, count: 32),
        logLevel: .warning,
        migrationsDirectory: TestDatabase.migrationsDirectory.path,
        dataDirectory: ".accountd-test",
        migrateOnStart: false,
        developmentDefaults: []
    )
}

/// Boots the real application on a free loopback port against `database` and runs `body` with an
/// HTTP client pointed at it.
func withServer<T: Sendable>(
    _ configuration: Configuration = testConfiguration(),
    database: DatabaseURL,
    _ body: @Sendable (TestHTTPClient) async throws -> T
) async throws -> T {
    let app = try await buildApplication(configuration, databaseURL: database, logger: TestDatabase.logger)
    return try await app.test(.live) { client in
        try await body(TestHTTPClient(port: client.port!))
    }
}
