public import AccountCore
public import Logging
public import PostgresNIO

/// Answers `/readyz`: the database answers a query and its schema is current.
package struct PostgresReadinessProbe: ReadinessProbe {
    private let migrator: Migrator

    /// Creates a probe over the migrator of the running client.
    package init(migrator: Migrator) {
        self.migrator = migrator
    }

    package func check() async -> Readiness {
        do {
            let status = try await withThrowingTaskGroup(of: Migrator.Status.self) { group in
                group.addTask { try await migrator.status() }
                group.addTask {
                    try await Task.sleep(for: .seconds(2))
                    throw CancellationError()
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
            if let problem = status.problem { return .notReady(problem.description) }
            if !status.pending.isEmpty { return .notReady(MigrationError.pending(status.pending).description) }
            return .ready
        } catch {
            return .notReady("database unreachable")
        }
    }
}
