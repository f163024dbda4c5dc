import AccountAPI
import AccountPostgres
import ArgumentParser
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The server executable: `accountd serve` (the default) and `accountd migrate`.
@main
struct AccountdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accountd",
        abstract: "Account store and session manager, wire-compatible with Firebase Authentication.",
        subcommands: [Serve.self, Migrate.self],
        defaultSubcommand: Serve.self
    )
}

/// Options shared by every subcommand; each falls back to its environment variable.
struct ServerOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL URL (DATABASE_URL). Without one, a local cluster is started.")
    var databaseURL: String?
    @Option(help: "Listen address (ACCOUNTD_HOST, default 127.0.0.1).")
    var host: String?
    @Option(help: "Listen port (ACCOUNTD_PORT, default 9099).")
    var port: String?
    @Option(name: .customLong("admin-host"), help: "Admin listener address (ACCOUNTD_ADMIN_HOST, default 127.0.0.1).")
    var adminHost: String?
    @Option(name: .customLong("admin-port"), help: "Admin listener port (ACCOUNTD_ADMIN_PORT, default 9098).")
    var adminPort: String?
    @Option(name: .customLong("project-id"), help: "Firebase project id (ACCOUNTD_PROJECT_ID, default demo-project).")
    var projectID: String?
    @Option(name: .customLong("api-keys"), help: "Accepted API keys, comma-separated (ACCOUNTD_API_KEYS).")
    var apiKeys: String?
    @Option(name: .customLong("admin-tokens"), help: "Admin bearer tokens as NAME:TOKEN, comma-separated (ACCOUNTD_ADMIN_TOKENS).")
    var adminTokens: String?
    @Option(
        name: .customLong("authorized-domains"),
        help: "Continue-URL domains, comma-separated (ACCOUNTD_AUTHORIZED_DOMAINS, default localhost).")
    var authorizedDomains: String?
    @Option(name: .customLong("key-encryption-key"), help: "32-byte key, base64 (ACCOUNTD_KEY_ENCRYPTION_KEY); prefer the variable.")
    var keyEncryptionKey: String?
    @Option(name: .customLong("log-level"), help: "trace … critical (LOG_LEVEL, default info).")
    var logLevel: String?
    @Option(name: .customLong("migrations-dir"), help: "Folder of NNNN_*.sql files (ACCOUNTD_MIGRATIONS_DIR, default ./migrations).")
    var migrationsDirectory: String?
    @Option(name: .customLong("data-dir"), help: "Folder of the local cluster (ACCOUNTD_DATA_DIR, default ./.accountd).")
    var dataDirectory: String?

    /// The raw input, before the environment fills the gaps.
    var input: ConfigurationInput {
        ConfigurationInput(
            databaseURL: databaseURL, host: host, port: port, adminHost: adminHost, adminPort: adminPort, projectID: projectID,
            apiKeys: apiKeys,
            adminTokens: adminTokens, authorizedDomains: authorizedDomains, keyEncryptionKey: keyEncryptionKey,
            logLevel: logLevel, migrationsDirectory: migrationsDirectory, dataDirectory: dataDirectory
        )
    }

    /// Resolves the configuration and bootstraps logging, or exits with the configuration's problems.
    func resolve(migrate: Bool) throws -> (Configuration, Logger) {
        var input = self.input
        input.migrate = migrate
        let configuration: Configuration
        do {
            configuration = try Configuration(input.merged(withEnvironment: ProcessInfo.processInfo.environment))
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        let level = configuration.logLevel
        let format = configuration.logFormat
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler.standardError(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "accountd")
        logger.logLevel = level
        for warning in configuration.developmentDefaults {
            logger.warning("DEVELOPMENT DEFAULT for project \(configuration.projectID): \(warning). Never expose this server.")
        }
        for warning in configuration.warnings {
            logger.critical("UNSAFE FOR REAL USERS, project \(configuration.projectID): \(warning).")
        }
        return (configuration, logger)
    }
}

/// Runs `body` with a database: the configured one, or a local cluster started for it and stopped
/// afterwards (also after SIGINT/SIGTERM, which end `body` gracefully).
func withDatabase<T>(
    _ configuration: Configuration,
    logger: Logger,
    _ body: (DatabaseURL) async throws -> T
) async throws -> T {
    if let url = configuration.database.url {
        logger.info("using database", metadata: ["url": "\(url.redacted)"])
        return try await body(url)
    }
    try LocalPostgres.installIfMissing(logger: logger)
    let local = LocalPostgres(dataDirectory: configuration.database.dataDirectory, port: 54329, logger: logger)
    try local.start()
    do {
        let result = try await body(local.databaseURL)
        local.stop()
        return result
    } catch {
        local.stop()
        throw error
    }
}

/// `accountd serve`: refuses to start on a pending or edited migration unless `--migrate`.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server.")

    @OptionGroup var options: ServerOptions
    @Flag(help: "Apply pending migrations before serving (ACCOUNTD_MIGRATE=1).")
    var migrate = false

    func run() async throws {
        let (configuration, logger) = try options.resolve(migrate: migrate)
        do {
            try await withDatabase(configuration, logger: logger) { url in
                // The local cluster is ours: migrate it without being asked.
                var configuration = configuration
                if configuration.database.url == nil { configuration.database.migrateOnStart = true }
                let traces = try TraceExport.bootstrap(environment: ProcessInfo.processInfo.environment, logger: logger)
                let app = try await buildApplication(
                    configuration, databaseURL: url, logger: logger, extraServices: traces.map { [$0] } ?? [])
                try await app.runService()
            }
        } catch let error as MigrationError {
            logger.critical("\(error.description)")
            throw ExitCode(65)
        }
    }
}

/// `accountd migrate`: applies pending migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let (configuration, logger) = try options.resolve(migrate: true)
        do {
            try await withDatabase(configuration, logger: logger) { url in
                // The advisory lock is a session's: behind a pooler in transaction mode, the session URL.
                let database = try ConnectionPool(url: configuration.database.sessionURL ?? url, pool: .onDemand(2), logger: logger)
                let migrations = try Migration.load(from: URL(fileURLWithPath: configuration.database.migrationsDirectory))
                do {
                    let applied = try await Migrator(migrations: migrations, database: database, logger: logger).migrate()
                    print(applied.isEmpty ? "schema is current" : "applied: \(applied.joined(separator: ", "))")
                    await database.shutdown()
                } catch {
                    await database.shutdown()
                    throw error
                }
            }
        } catch let error as MigrationError {
            logger.critical("\(error.description)")
            throw ExitCode(65)
        }
    }
}
