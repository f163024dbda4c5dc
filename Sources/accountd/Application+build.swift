import AccountAPI
import AccountCore
import AccountPostgres
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// Composes the server from a configuration whose database is known: the PostgreSQL client, the
/// migration gate, the routes. `accountd serve` and the tests call this same function.
func buildApplication(
    _ configuration: Configuration,
    databaseURL: DatabaseURL,
    logger: Logger
) async throws -> some ApplicationProtocol {
    let postgres = PostgresClient(
        configuration: try databaseURL.clientConfiguration(),
        backgroundLogger: logger
    )
    let migrations = try Migration.load(from: URL(fileURLWithPath: configuration.migrationsDirectory))
    let migrator = Migrator(migrations: migrations, client: postgres, logger: logger)

    var routes = APIRoutes()
    routes.addHealth(readiness: PostgresReadinessProbe(migrator: migrator))

    var app = Application(
        responder: APIResponder(routes: routes, access: configuration.accessPolicy),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "accountd"),
        services: [postgres],
        logger: logger
    )
    app.beforeServerStarts {
        if configuration.migrateOnStart {
            let applied = try await migrator.migrate()
            if !applied.isEmpty { logger.notice("migrated", metadata: ["applied": "\(applied.joined(separator: ", "))"]) }
        } else {
            try await migrator.requireCurrent()
        }
    }
    return app
}
