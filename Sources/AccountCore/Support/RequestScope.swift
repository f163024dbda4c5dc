/// What the request being served allows its database work: a deadline for waiting on a database
/// connection, measured on the monotonic clock from the request's arrival (restarted when its body
/// has arrived), and whether its client is still there to see the answer.
///
/// The HTTP layer binds one per request (``RequestScope/current``); the store reads it where
/// waiting or writing could outlive the request: a wait for a database connection ends at the
/// deadline with 503 `UNAVAILABLE`, and a write whose client has gone (or was answered 503 at the
/// HTTP request timeout) does not commit, so nothing is written after the client was told to
/// retry or stopped listening.
/// Work outside a request (background services, tools) has no scope and uses the pool's own wait.
package struct RequestScope: Sendable {
    /// Until when the request may wait for a database connection.
    package var deadline: ContinuousClock.Instant
    /// The deadline's length, from the request's arrival.
    package var budget: Duration
    /// Whether the client has gone (its connection closed); checked before a write commits.
    package var clientGone: @Sendable () -> Bool

    /// A scope ending `budget` from now.
    package init(budget: Duration, clientGone: @escaping @Sendable () -> Bool = { false }) {
        self.deadline = .now + budget
        self.budget = budget
        self.clientGone = clientGone
    }

    /// The scope of the request this task serves, if any.
    @TaskLocal package static var current: RequestScope?

    /// Runs `body` with the current deadline restarted now: called once the request's body has
    /// arrived, so a large upload over a slow link does not spend its database budget (the HTTP
    /// request timeout bounds the upload).
    package static func arrived<T>(_ body: () async throws -> T) async rethrows -> T {
        guard var scope = current else { return try await body() }
        scope.deadline = .now + scope.budget
        return try await $current.withValue(scope) { try await body() }
    }

    /// Throws `CancellationError` (503 `UNAVAILABLE`) when the current request's client has gone:
    /// it disconnected, or the server already answered it 503 at the HTTP request timeout and
    /// closed its connection. Called right before a write commits, so nothing lands after the
    /// client gave up on it or was told to retry. The deadline is not checked here: it bounds
    /// waits, and a write that got its connection in time may finish while its client listens.
    package static func checkBeforeWriting() throws {
        guard let scope = current else { return }
        if scope.clientGone() { throw CancellationError() }
    }
}
