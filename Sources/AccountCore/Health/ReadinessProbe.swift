/// Whether the process can serve: the database answers and its schema is the one this build
/// expects. `/readyz` asks it; the Postgres adapter answers.
package protocol ReadinessProbe: Sendable {
    /// Checks the dependencies; never throws, a failure is a ``Readiness/notReady(_:)``.
    func check() async -> Readiness
}

/// The outcome of a ``ReadinessProbe`` check.
package enum Readiness: Sendable, Equatable {
    /// Everything the service needs answers.
    case ready
    /// Something is missing; the reason is safe to show an operator.
    case notReady(String)
}
