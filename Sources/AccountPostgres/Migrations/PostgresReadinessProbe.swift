package import AccountCore
import Logging
import PostgresNIO

/// Answers `/readyz`: the database answers a query and its schema is current. While the pool
/// knows the database to be unreachable it answers at once; otherwise the check waits at most
/// ``timeout`` for a connection and its answer.
package struct PostgresReadinessProbe: ReadinessProbe {
    private let migrator: Migrator
    private let database: Database
    /// The longest one check waits.
    package static let timeout = Duration.seconds(1)

    /// Creates a probe over the migrator of the running pool.
    package init(migrator: Migrator, database: Database) {
        self.migrator = migrator
        self.database = database
    }

    package func check() async -> Readiness {
        if database.unreachable() { return .notReady("database unreachable") }
        do {
            let status = try await RequestScope.$current.withValue(RequestScope(budget: Self.timeout)) {
                try await migrator.status()
            }
            if let problem = status.problem { return .notReady(problem.description) }
            if !status.pending.isEmpty { return .notReady(MigrationError.pending(status.pending).description) }
            return .ready
        } catch {
            return .notReady("database unreachable")
        }
    }
}
