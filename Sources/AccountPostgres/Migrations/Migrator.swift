package import Logging
import PostgresNIO

/// Applies `migrations/` to a database: each pending file in its own transaction, recorded with
/// its checksum in `schema_migrations`; edited or unknown applied files are refused. Replicas that
/// migrate at once serialise on an advisory lock.
package struct Migrator: Sendable {
    /// The files this build knows, in order.
    package let migrations: [Migration]
    private let database: ConnectionPool
    private let logger: Logger

    /// An arbitrary constant that names accountd's migration lock.
    private static let advisoryLockKey: Int64 = 0x6163_636f_756e_7464

    /// Creates a migrator over a running database.
    package init(migrations: [Migration], database: ConnectionPool, logger: Logger) {
        self.migrations = migrations
        self.database = database
        self.logger = logger
    }

    /// The state of the database against this build's files.
    package struct Status: Sendable, Equatable {
        /// Applied files, by name.
        package var applied: [String]
        /// Files not yet applied, in order.
        package var pending: [String]
        /// A problem that blocks serving (edited or unknown applied file), if any.
        package var problem: MigrationError?
    }

    /// Reads what is applied and compares it with the files; changes nothing.
    package func status() async throws -> Status {
        try await database.withConnection { connection in
            try await self.status(on: connection)
        }
    }

    /// Throws ``MigrationError`` unless the schema is exactly current.
    package func requireCurrent() async throws {
        let status = try await status()
        if let problem = status.problem { throw problem }
        if !status.pending.isEmpty { throw MigrationError.pending(status.pending) }
    }

    /// Applies every pending file; returns the names applied (empty when already current).
    @discardableResult
    package func migrate() async throws -> [String] {
        try await database.withConnection { connection in
            // The pool's lock and statement timeouts are for requests. A replica waits for another's
            // migration (the advisory lock), DDL waits for its table locks and runs as long as it takes.
            _ = try await connection.query("SET lock_timeout = 0", logger: logger)
            _ = try await connection.query("SET statement_timeout = 0", logger: logger)
            _ = try await connection.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))", logger: logger)
            do {
                let applied = try await self.applyPending(on: connection)
                _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                _ = try await connection.query("RESET lock_timeout", logger: logger)
                _ = try await connection.query("RESET statement_timeout", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                _ = try? await connection.query("RESET lock_timeout", logger: logger)
                _ = try? await connection.query("RESET statement_timeout", logger: logger)
                throw error
            }
        }
    }

    private func applyPending(on connection: DatabaseConnection) async throws -> [String] {
        try await ensureTable(on: connection)
        let status = try await status(on: connection)
        if let problem = status.problem { throw problem }
        var appliedNow: [String] = []
        for migration in migrations where status.pending.contains(migration.name) {
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in SQLScript.statements(migration.sql) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        """
                        INSERT INTO schema_migrations (version, name, checksum)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """,
                        logger: logger
                    )
                }
            } catch let error as ConnectionPool.TransactionError {
                throw MigrationError.failed(migration.name, Self.describe(error.cause))
            }
            appliedNow.append(migration.name)
        }
        return appliedNow
    }

    private func ensureTable(on connection: DatabaseConnection) async throws {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
    }

    private func status(on connection: DatabaseConnection) async throws -> Status {
        let exists =
            try await connection.query(
                "SELECT to_regclass('schema_migrations') IS NOT NULL",
                logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        var applied: [(Int, String, String)] = []
        if exists {
            let rows = try await connection.query(
                "SELECT version, name, checksum FROM schema_migrations ORDER BY version",
                logger: logger
            )
            for try await (version, name, checksum) in rows.decode((Int, String, String).self) {
                applied.append((version, name, checksum))
            }
        }
        var problem: MigrationError?
        let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for (version, name, checksum) in applied {
            guard let file = byVersion[version], file.name == name else {
                problem = problem ?? .unknownApplied(name)
                continue
            }
            if file.checksum != checksum { problem = problem ?? .edited(name) }
        }
        let appliedVersions = Set(applied.map(\.0))
        return Status(
            applied: applied.map(\.1),
            pending: migrations.filter { !appliedVersions.contains($0.version) }.map(\.name),
            problem: problem
        )
    }

    /// A one-line reason from a PostgreSQL error, without the query's binds.
    package static func describe(_ error: any Error) -> String {
        if let psql = error as? PSQLError, let message = psql.serverInfo?[.message] {
            return message
        }
        return String(describing: error)
    }
}
