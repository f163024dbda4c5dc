package import AccountCore
import Logging
import PostgresNIO

/// Answers `/readyz`: the database answers a query and its schema is current. While the pool
/// knows the database to be unreachable it answers at once; otherwise the check waits at most
/// ``timeout`` for a connection and its answer.
package struct PostgresReadinessProbe: ReadinessProbe {
    private let migrator: Migrator
    private let database: ConnectionPool
    /// The longest one check waits.
    private let timeout: Duration
    /// What `/readyz` allows a check by default: an orchestrator's probe must get its answer quickly.
    package static let defaultTimeout = Duration.seconds(1)

    /// Creates a probe over the migrator of the running pool.
    package init(migrator: Migrator, database: ConnectionPool, timeout: Duration = Self.defaultTimeout) {
        self.migrator = migrator
        self.database = database
        self.timeout = timeout
    }

    package func check() async -> Readiness {
        if database.unreachable() { return .notReady("database unreachable") }
        do {
            let status = try await RequestScope.$current.withValue(RequestScope(budget: timeout)) {
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
