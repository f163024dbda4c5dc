import AccountCore
import CoreMetrics
package import Logging
import NIOCore
package import PostgresNIO
import Synchronization

/// A connection leased from ``ConnectionPool``, as the store's statements use it.
///
/// PostgresNIO 1.33.2 writes a statement to its channel without a promise: written to a
/// connection that has already closed (the server restarting terminated its backend between two
/// statements of a transaction, or just before the `ROLLBACK` after the `57P01` it reported),
/// the statement is dropped with the channel's handlers and its caller waits for ever. Here each
/// statement starts on the connection's own event loop, which checks that the connection is open
/// and hands the statement to the driver in one step: a close, which runs on that loop too,
/// either came before (the statement fails at once with ``ConnectionPool/Unavailable``, 503
/// `UNAVAILABLE`) or comes after, and the driver fails the statement it holds. (This relies on
/// a nonisolated async function running on the task executor its caller prefers; the upcoming
/// feature `NonisolatedNonsendingByDefault` would run `checkOpen` on the caller's executor.)
package struct DatabaseConnection: Sendable {
    /// The driver's connection, for what this type does not wrap.
    package let underlying: PostgresConnection
    private let loop: EventLoopExecutor
    /// The pool's per-statement timers.
    private let timers: StatementTimers?
    /// Whether ``execute(_:logger:)`` prepares its statement (``PoolSettings/preparedStatements``).
    private let prepares: Bool

    init(_ underlying: PostgresConnection, loop: EventLoopExecutor, timers: StatementTimers? = nil, prepares: Bool = true) {
        self.underlying = underlying
        self.loop = loop
        self.timers = timers
        self.prepares = prepares
    }

    /// Runs one statement; its rows stream from the returned sequence.
    @discardableResult
    package func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws
        -> PostgresRowSequence
    {
        try await withTaskExecutorPreference(loop) {
            try checkOpen()
            return try await underlying.query(query, logger: logger, file: file, line: line)
        }
    }

    /// Runs one prepared statement (prepared on this connection at its first use), or, when the
    /// pool prepares nothing, the same statement unnamed.
    package func execute<Statement: PostgresPreparedStatement, Row>(_ statement: Statement, logger: Logger) async throws
        -> AsyncThrowingMapSequence<PostgresRowSequence, Row> where Row == Statement.Row
    {
        try await withTaskExecutorPreference(loop) {
            try checkOpen()
            guard let timer = timers?.timer(Statement.self) else { return try await run(statement, logger: logger) }
            let started = ContinuousClock.now
            defer {
                let (seconds, attoseconds) = (ContinuousClock.now - started).components
                timer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            }
            return try await run(statement, logger: logger)
        }
    }

    private func run<Statement: PostgresPreparedStatement, Row>(_ statement: Statement, logger: Logger) async throws
        -> AsyncThrowingMapSequence<PostgresRowSequence, Row> where Row == Statement.Row
    {
        if prepares { return try await underlying.execute(statement, logger: logger) }
        let rows = try await underlying.query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings()), logger: logger)
        return rows.map { try statement.decodeRow($0) }
    }

    /// `COPY table (columns) FROM STDIN` in text format, sending `rows` (``CopyText``), started on
    /// the connection's loop as every statement is.
    func copy(into table: String, columns: [String], rows: ByteBuffer, logger: Logger) async throws {
        try await withTaskExecutorPreference(loop) {
            try checkOpen()
            try await underlying.copyFrom(table: table, columns: columns, logger: logger) { writer in
                try await writer.write(rows)
            }
        }
    }

    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT`, or `ROLLBACK` when it throws (not
    /// sent on a connection that has closed). The error is a ``ConnectionPool/TransactionError``.
    ///
    /// A request's transaction commits only if its client is still there
    /// (``RequestScope/checkBeforeWriting()``): one answered 503 at the HTTP request timeout, or
    /// whose client disconnected, rolls back, so nothing is written after the client was told to
    /// retry or gave up.
    package func withTransaction<Result>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (DatabaseConnection) async throws -> sending Result
    ) async throws -> sending Result {
        do {
            try await query("BEGIN", logger: logger)
        } catch {
            throw ConnectionPool.TransactionError(beginError: error)
        }
        let result: Result
        do {
            result = try await body(self)
            try RequestScope.checkBeforeWriting()
        } catch {
            var failure = ConnectionPool.TransactionError(closureError: error)
            do {
                try await query("ROLLBACK", logger: logger)
            } catch {
                failure.rollbackError = error
            }
            throw failure
        }
        do {
            try await query("COMMIT", logger: logger)
        } catch {
            throw ConnectionPool.TransactionError(commitError: error)
        }
        return result
    }

    private func checkOpen() throws {
        if underlying.isClosed { throw ConnectionPool.connectionClosed }
    }
}

/// An event loop as a task executor: work under ``withTaskExecutorPreference`` runs on its thread.
final class EventLoopExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A timer per prepared statement type (``MetricFamily/statementDuration``), made once per type:
/// the statement's Swift type name is the label, a bounded set.
final class StatementTimers: Sendable {
    private let telemetry: Telemetry
    private let timers = Mutex<[ObjectIdentifier: Timer]>([:])

    init(telemetry: Telemetry) {
        self.telemetry = telemetry
    }

    func timer(_ type: Any.Type) -> Timer {
        let key = ObjectIdentifier(type)
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let timer = Timer(
            label: MetricFamily.statementDuration.rawValue, dimensions: [("statement", String(describing: type))],
            factory: telemetry.factory)
        timers.withLock { $0[key] = timer }
        return timer
    }
}
