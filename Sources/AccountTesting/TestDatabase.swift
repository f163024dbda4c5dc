package import AccountPostgres
package import Foundation
package import Logging
import PostgresNIO

/// Real PostgreSQL for tests: a template database migrated once per test process, and a fresh
/// database cloned from it for every suite. The cluster comes from `ACCOUNTD_TEST_DATABASE_URL`
/// (set by `scripts/test`); without it every database test fails loudly, it never skips.
package enum TestDatabase {
    /// The repository's `migrations/` folder.
    package static var migrationsDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
    }

    /// A quiet logger for test infrastructure.
    package static var logger: Logger {
        var logger = Logger(label: "accountd-tests")
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }

    /// The cluster's maintenance URL.
    package static func serverURL() throws -> DatabaseURL {
        guard let raw = ProcessInfo.processInfo.environment["ACCOUNTD_TEST_DATABASE_URL"], !raw.isEmpty else {
            throw TestDatabaseError(
                "ACCOUNTD_TEST_DATABASE_URL is not set: run the suite with scripts/test, which starts PostgreSQL"
            )
        }
        return try DatabaseURL(raw)
    }

    /// A new, empty database (no schema at all).
    package static func createEmpty() async throws -> DatabaseURL {
        let server = try serverURL()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        try await execute("CREATE DATABASE \(name)", on: server)
        return server.with(database: String(name))
    }

    /// A new database with the current schema, cloned from the migrated template.
    package static func createMigrated() async throws -> DatabaseURL {
        let server = try serverURL()
        let template = try await Template.shared.name()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        // The template's last connection may still be closing: PostgreSQL then refuses to copy it
        // ("being accessed by other users") for a moment.
        var attempt = 0
        while true {
            do {
                try await execute("CREATE DATABASE \(name) TEMPLATE \(template)", on: server)
                return server.with(database: String(name))
            } catch {
                attempt += 1
                if attempt >= 50 { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Runs `body` with a running pool on `url`. The pool sets no lock or statement timeout: a
    /// test process as busy as the whole suite can leave a transaction waiting for its turn on the
    /// CPU for seconds, and a concurrent one must then wait for it, not fail (a test of the
    /// timeouts builds its own pool).
    @discardableResult
    package static func withClient<T: Sendable>(
        _ url: DatabaseURL,
        _ body: @Sendable (ConnectionPool) async throws -> T
    ) async throws -> T {
        let pool = PoolSettings(
            maximumConnections: 4, minimumConnections: 0, waitSeconds: 30, lockTimeoutSeconds: nil, statementTimeoutSeconds: nil)
        let database = try ConnectionPool(url: url, pool: pool, logger: logger)
        do {
            let result = try await body(database)
            await database.shutdown()
            return result
        } catch {
            await database.shutdown()
            throw error
        }
    }

    /// Runs one statement (simple protocol, so DDL works) on a single connection.
    package static func execute(_ sql: String, on url: DatabaseURL) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: url.host, port: url.port, username: url.username, password: url.password, database: url.database, tls: .disable),
            id: 1,
            logger: logger
        )
        do {
            _ = try await connection.simpleQuery(sql).get()
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Builds the template once per process.
    private actor Template {
        static let shared = Template()
        private var task: Task<String, any Error>?

        func name() async throws -> String {
            if let task { return try await task.value }
            let task = Task { try await Self.build() }
            self.task = task
            return try await task.value
        }

        private static func build() async throws -> String {
            let server = try serverURL()
            let migrations = try Migration.load(from: migrationsDirectory)
            let name = "tmpl_\(ProcessInfo.processInfo.processIdentifier)_\(UInt32.random(in: 0...UInt32.max))"
            try await execute("CREATE DATABASE \(name)", on: server)
            try await withClient(server.with(database: name)) { client in
                try await Migrator(migrations: migrations, database: client, logger: logger).migrate()
            }
            return name
        }
    }
}

/// A test infrastructure failure, said plainly.
package struct TestDatabaseError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
