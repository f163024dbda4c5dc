package import AccountCore
import CoreMetrics
package import Logging
package import NIOCore
import NIOPosix
package import PostgresNIO
import ServiceLifecycle
import Synchronization
import Tracing

/// accountd's pool of PostgreSQL connections: every statement of the store, the migrator and the
/// background services runs on a connection leased here.
///
/// PostgresNIO's own pool (`PostgresClient`, 1.33.2) crashes the process when the database goes
/// away under load with a minimum number of connections kept open (a precondition in its state
/// machine: failed connection attempts are destroyed, the open count falls below the minimum,
/// and the next lease that finds no idle connection traps), and it starts and cancels a timer task
/// at every lease above its minimum. This pool keeps the part of that design accountd needs and
/// owns the rest:
/// - **Warm.** The minimum number of connections is opened at start and kept; a lease that finds
///   an idle connection takes it under one lock, with no timer, task or allocation.
/// - **Bounded waits.** A lease that finds none waits in FIFO order until the current request's
///   deadline (``RequestScope``) or, outside a request, ``PoolSettings/waitSeconds``; then it
///   fails with ``Unavailable`` (503 `UNAVAILABLE` with `Retry-After`) and leaves the queue, so a
///   request abandoned during an outage never runs when the database returns. A cancelled task
///   leaves the queue at once, and a connection handed to a request whose client has gone goes
///   back unused.
/// - **Reconnects.** A connection that closes (the server restarting, a backend terminated) is
///   dropped and replaced. While connection attempts fail the pool makes one at a time, with
///   exponential back-off capped at ``maximumBackoff``, and logs one line when the database
///   becomes unreachable and one when it is back.
package final class ConnectionPool: Sendable {
    /// The pool could not provide a connection: the wait reached its deadline, the database is
    /// unreachable, or the pool is shut down. Answered as 503 `UNAVAILABLE`.
    package struct Unavailable: Error, CustomStringConvertible {
        /// What happened, safe to log and to show (no address, no credentials).
        package var description: String

        /// A server that takes no writes: a standby, or a primary demoted by a failover.
        package static let readOnly = Unavailable(description: "The database is read-only (a failover may be under way), retry shortly.")
    }

    /// The pool's shape.
    package let pool: PoolSettings
    /// The longest pause between connection attempts while the database is unreachable.
    package static let maximumBackoff = Duration.seconds(1)

    /// One configuration per server of the URL, in the order they are tried.
    private let configurations: [PostgresConnection.Configuration]
    /// Whether only a server whose sessions may write will do (`target_session_attrs=read-write`).
    private let requireWritable: Bool
    /// The server the last connection went to: the next attempt starts there.
    private let preferred = Mutex(0)
    private let logger: Logger
    private let eventLoopGroup: any EventLoopGroup
    private let state = Mutex(State())
    /// An executor per event loop of the group, for ``DatabaseConnection``.
    private let executors: [ObjectIdentifier: EventLoopExecutor]
    /// The time each lease waited (zero when a connection was idle).
    private let waitTimer: Timer
    /// Connection attempts that failed.
    private let connectFailures: Counter
    /// Leases that reached their deadline without a connection (503 to the request).
    private let deadlineMisses: Counter
    /// Prepared statements' round trips; nil when metrics are off.
    private let statementTimers: StatementTimers?

    /// A pool of connections to `url`, shaped by `pool`. Nothing is opened until ``run()`` warms
    /// it or the first lease asks.
    package init(
        url: DatabaseURL, pool: PoolSettings = PoolSettings(), logger: Logger,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, telemetry: Telemetry = .off
    ) throws {
        waitTimer = Timer(label: MetricFamily.poolWait.rawValue, dimensions: [], factory: telemetry.factory)
        connectFailures = Counter(label: MetricFamily.connectFailures.rawValue, dimensions: [], factory: telemetry.factory)
        deadlineMisses = Counter(
            label: MetricFamily.httpTimeouts.rawValue, dimensions: [("kind", "request_deadline")], factory: telemetry.factory)
        statementTimers = telemetry.isOff ? nil : StatementTimers(telemetry: telemetry)
        self.configurations = try url.connectionConfigurations(pool: pool)
        self.requireWritable = url.targetSessionAttrs == .readWrite
        self.pool = pool
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
        var executors: [ObjectIdentifier: EventLoopExecutor] = [:]
        for loop in eventLoopGroup.makeIterator() { executors[ObjectIdentifier(loop)] = EventLoopExecutor(loop) }
        self.executors = executors
    }

    /// The pool's shape now, for the metrics scrape.
    package struct Figures: Sendable {
        /// Open connections waiting for a lease.
        package var idle: Int
        /// Open connections leased.
        package var leased: Int
        /// Leases waiting for a connection.
        package var waiters: Int
    }

    /// The pool's shape now.
    package func figures() -> Figures {
        state.withLock { state in
            Figures(idle: state.idle.count, leased: state.live.count - state.idle.count, waiters: state.waiters.count)
        }
    }

    // MARK: Using connections

    /// Runs `body` on a leased connection and returns the connection to the pool.
    package func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (DatabaseConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let connection = try await lease()
        do {
            let result = try await body(
                DatabaseConnection(connection, loop: executor(for: connection), timers: statementTimers, prepares: pool.preparedStatements))
            release(connection)
            return result
        } catch {
            release(connection, after: error)
            throw error
        }
    }

    /// Runs `body` in a transaction (`BEGIN` … `COMMIT`, `ROLLBACK` when it throws) on a leased
    /// connection.
    package func withTransaction<Result>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (DatabaseConnection) async throws -> sending Result
    ) async throws -> sending Result {
        // A span per transaction for a bootstrapped tracer (a no-op otherwise).
        try await withSpan("db.transaction", ofKind: .client, isolation: isolation) { _ in
            try await withConnection(isolation: isolation) { connection in
                try await connection.withTransaction(logger: logger, isolation: isolation, body)
            }
        }
    }

    /// A transaction that failed: the error of its `BEGIN`, of its body (and of the `ROLLBACK`
    /// that followed, if that failed too) or of its `COMMIT`.
    package struct TransactionError: Error, CustomStringConvertible {
        package var beginError: (any Error)?
        package var closureError: (any Error)?
        package var rollbackError: (any Error)?
        package var commitError: (any Error)?

        /// The error that ended the transaction (the body's, else COMMIT's, else BEGIN's).
        package var failure: (any Error)? { closureError ?? commitError ?? beginError }
        /// ``failure``, or the transaction error itself when there is none.
        package var cause: any Error { failure ?? self }

        package var description: String {
            if let beginError { return "BEGIN failed: \(String(reflecting: beginError))" }
            if let commitError { return "COMMIT failed: \(String(reflecting: commitError))" }
            var text = "transaction failed: \(closureError.map { String(reflecting: $0) } ?? "?")"
            if let rollbackError { text += "; ROLLBACK failed: \(String(reflecting: rollbackError))" }
            return text
        }
    }

    /// Runs one statement and returns its rows, read whole before the connection goes back.
    @discardableResult
    package func query(_ query: PostgresQuery, logger: Logger? = nil) async throws -> [PostgresRow] {
        let logger = logger ?? self.logger
        return try await withConnection { try await $0.query(query, logger: logger).collect() }
    }

    /// Runs one prepared statement (prepared on each connection at its first use) and returns its
    /// decoded rows.
    @discardableResult
    package func execute<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger? = nil) async throws
        -> [Statement.Row]
    {
        let logger = logger ?? self.logger
        return try await withConnection { connection in
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// A connection of its own, outside the pool, for a session that lives as long as its user
    /// (`LISTEN`). The caller closes it.
    package func connectDedicated(logger: Logger) async throws -> PostgresConnection {
        try await connect(id: nextConnectionID(), logger: logger)
    }

    /// A connection to the first server that answers, starting with the one the last connection
    /// went to; with ``requireWritable``, one whose sessions may write (a standby, or a demoted
    /// primary, is closed and the next server tried): after a failover the pool finds the new
    /// primary on its own.
    private func connect(id: Int, logger: Logger) async throws -> PostgresConnection {
        let start = preferred.withLock { $0 }
        var failure: (any Error)?
        for offset in 0..<configurations.count {
            let index = (start + offset) % configurations.count
            do {
                let connection = try await PostgresConnection.connect(
                    on: eventLoopGroup.any(), configuration: configurations[index], id: id, logger: logger)
                if requireWritable {
                    var readOnly = true
                    do {
                        for try await value in try await connection.query("SHOW transaction_read_only", logger: logger).decode(String.self)
                        {
                            readOnly = value != "off"
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    if readOnly {
                        try? await connection.close()
                        failure = Unavailable.readOnly
                        continue
                    }
                }
                if index != start { preferred.withLock { $0 = index } }
                return connection
            } catch {
                failure = error
            }
        }
        throw failure ?? Unavailable(description: "The database is unreachable, retry shortly.")
    }

    /// Whether the pool knows the database to be unreachable: its latest connection attempt failed
    /// and it holds no open connection. Readiness answers at once from this. When no attempt is
    /// under way or scheduled (a pool with no minimum and no waiters stops trying), it starts one,
    /// so readiness turns back to ready once the database is.
    package func unreachable() -> Bool {
        let (unreachable, connect) = state.withLock { state -> (Bool, Int) in
            guard state.downSince != nil, state.live.isEmpty else { return (false, 0) }
            guard !state.closed, !state.retryPending, state.connecting == 0 else { return (true, 0) }
            state.connecting = 1
            return (true, 1)
        }
        perform(Effects(connect: connect))
        return unreachable
    }

    // MARK: Leasing

    /// A connection for the current task, waiting at most until the request's deadline.
    package func lease() async throws -> PostgresConnection {
        let scope = RequestScope.current
        while true {
            if let connection = try await waitForConnection(scope: scope) { return connection }
        }
    }

    private func executor(for connection: PostgresConnection) -> EventLoopExecutor {
        executors[ObjectIdentifier(connection.eventLoop)] ?? EventLoopExecutor(connection.eventLoop)
    }

    /// One attempt of ``lease()``: nil when the connection it got had closed meanwhile.
    private func waitForConnection(scope: RequestScope?) async throws -> PostgresConnection? {
        if let connection = state.withLock({ $0.idle.popLast() }) {
            waitTimer.recordNanoseconds(0)
            return try handOver(connection, scope: scope)
        }
        let waitStarted = ContinuousClock.now
        defer {
            let (seconds, attoseconds) = (ContinuousClock.now - waitStarted).components
            waitTimer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        let deadline = scope?.deadline ?? .now + .seconds(pool.waitSeconds)
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else {
            deadlineMisses.increment()
            throw Unavailable(description: "The database did not answer in time, retry shortly.")
        }
        let waiterID = nextConnectionID()
        let connection = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PostgresConnection, any Error>) in
                let effects = state.withLock { state -> Effects in
                    if let connection = state.idle.popLast() { return Effects(resume: [(continuation, .success(connection))]) }
                    if state.closed { return Effects(resume: [(continuation, .failure(Self.shutDown))]) }
                    if Task.isCancelled { return Effects(resume: [(continuation, .failure(CancellationError()))]) }
                    state.waiters.append(Waiter(id: waiterID, continuation: continuation))
                    return Effects(connect: state.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections))
                }
                perform(effects)
                guard effects.resume.isEmpty else { return }
                let timer = eventLoopGroup.any().scheduleTask(in: .nanoseconds(Self.nanoseconds(remaining))) { [self] in
                    expire(waiterID)
                }
                let armed = state.withLock { state in
                    guard let index = state.waiters.firstIndex(where: { $0.id == waiterID }) else { return false }
                    state.waiters[index].timer = timer
                    return true
                }
                if !armed { timer.cancel() }
            }
        } onCancel: {
            fail(waiter: waiterID, with: CancellationError())
        }
        return try handOver(connection, scope: scope)
    }

    /// Gives `connection` to the caller, unless its client has gone: then it goes back unused.
    /// A connection that closed while idle is dropped here and the lease tries again, rather than
    /// failing its first statement (``DatabaseConnection``).
    private func handOver(_ connection: PostgresConnection, scope: RequestScope?) throws -> PostgresConnection? {
        if let scope, scope.clientGone() {
            release(connection)
            throw CancellationError()
        }
        if connection.isClosed {
            release(connection)
            return nil
        }
        return connection
    }

    /// Returns a connection after use. One that closed, or that failed in a way that leaves its
    /// session in doubt (a failed `ROLLBACK`, a broken connection), is closed and replaced.
    package func release(_ connection: PostgresConnection, after error: (any Error)? = nil) {
        let broken = connection.isClosed || error.map(Self.leavesConnectionInDoubt) == true
        let effects = state.withLock { state -> Effects in
            guard state.live.contains(connection.id) else { return Effects(close: [connection]) }
            if broken || state.closed {
                state.live.remove(connection.id)
                return Effects(
                    close: [connection], connect: state.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections))
            }
            if !state.waiters.isEmpty {
                let waiter = state.waiters.removeFirst()
                return Effects(resume: [(waiter.continuation, .success(connection))], cancel: waiter.timer.map { [$0] } ?? [])
            }
            state.idle.append(connection)
            return Effects()
        }
        perform(effects)
    }

    /// Whether a connection that threw `error` may hold an open transaction or an unread reply.
    static func leavesConnectionInDoubt(_ error: any Error) -> Bool {
        if let transaction = error as? TransactionError {
            return transaction.rollbackError != nil || transaction.failure.map(leavesConnectionInDoubt) == true
        }
        // An error PostgreSQL reported ends its statement cleanly; any other driver error (a
        // closed channel, a protocol failure) leaves the session unknown.
        // A write refused as read-only (`25006`): the server was demoted under the connection,
        // which must go so that the next one finds the new primary.
        if let psql = error as? PSQLError { return psql.serverInfo?[.sqlState] == nil || psql.serverInfo?[.sqlState] == "25006" }
        return false
    }

    private func expire(_ waiterID: Int) {
        // Counted only when the waiter was still waiting: a timer that fires just after a
        // connection was handed over misses no deadline.
        if fail(waiter: waiterID, with: Unavailable(description: "The database did not answer in time, retry shortly.")) {
            deadlineMisses.increment()
        }
    }

    /// Fails the waiter `waiterID` with `error`; whether it was still waiting.
    @discardableResult
    private func fail(waiter waiterID: Int, with error: any Error) -> Bool {
        let effects = state.withLock { state -> Effects? in
            guard let index = state.waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            return Effects(resume: [(waiter.continuation, .failure(error))], cancel: waiter.timer.map { [$0] } ?? [])
        }
        guard let effects else { return false }
        perform(effects)
        return true
    }

    // MARK: Opening and closing connections

    private func open() async {
        let id = nextConnectionID()
        do {
            let connection = try await connect(id: id, logger: logger)
            let effects = state.withLock { state -> Effects in
                state.connecting -= 1
                if state.closed { return Effects(close: [connection]) }
                var effects = Effects()
                if let since = state.downSince {
                    effects.recovered = ContinuousClock.now - since
                    state.downSince = nil
                    state.failures = 0
                }
                state.live.insert(id)
                if !state.waiters.isEmpty {
                    let waiter = state.waiters.removeFirst()
                    effects.resume.append((waiter.continuation, .success(connection)))
                    if let timer = waiter.timer { effects.cancel.append(timer) }
                } else {
                    state.idle.append(connection)
                }
                effects.connect = state.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections)
                return effects
            }
            connection.closeFuture.whenComplete { [self] _ in closed(id) }
            perform(effects)
        } catch {
            connectFailures.increment()
            let effects = state.withLock { state -> Effects in
                state.connecting -= 1
                state.failures += 1
                var effects = Effects()
                if state.downSince == nil {
                    state.downSince = .now
                    effects.lost = Self.summary(of: error)
                }
                if !state.closed, !state.retryPending, state.connecting == 0,
                    !state.waiters.isEmpty || state.live.count < pool.minimumConnections
                {
                    state.retryPending = true
                    effects.retryAfter = Self.backoff(afterFailures: state.failures)
                }
                return effects
            }
            perform(effects)
        }
    }

    /// A connection closed by the server or the network: drop it and open what the pool misses.
    private func closed(_ id: Int) {
        let effects = state.withLock { state -> Effects in
            guard state.live.remove(id) != nil else { return Effects() }
            state.idle.removeAll { $0.id == id }
            return Effects(connect: state.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections))
        }
        perform(effects)
    }

    private func retry() {
        let count = state.withLock { state -> Int in
            state.retryPending = false
            return state.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections)
        }
        perform(Effects(connect: count))
    }

    /// The pause before the next attempt after `failures` failed ones in a row: 50 ms doubling,
    /// capped at ``maximumBackoff``, each with up to a quarter of jitter so replicas spread out.
    static func backoff(afterFailures failures: Int) -> Duration {
        let base = min(Duration.milliseconds(50) * (1 << min(failures - 1, 10)), maximumBackoff)
        return base * Double.random(in: 0.75...1.0)
    }

    private func perform(_ effects: Effects) {
        for timer in effects.cancel { timer.cancel() }
        for (continuation, result) in effects.resume { continuation.resume(with: result) }
        for connection in effects.close {
            // The closure holds the connection until its channel has closed: PostgresNIO asserts
            // (in debug builds) that a connection is closed before it is released.
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }
        for _ in 0..<effects.connect { Task { await open() } }
        if let lost = effects.lost {
            logger.warning("database unreachable; requests wait for a connection until their deadline", metadata: ["error": "\(lost)"])
        }
        if let recovered = effects.recovered {
            logger.notice(
                "database reachable again",
                metadata: ["down_ms": "\(recovered.components.seconds * 1000 + recovered.components.attoseconds / 1_000_000_000_000_000)"])
        }
        if let retryAfter = effects.retryAfter {
            eventLoopGroup.any().scheduleTask(in: .nanoseconds(Self.nanoseconds(retryAfter))) { [self] in retry() }
        }
    }

    private func nextConnectionID() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    private static let shutDown = Unavailable(description: "The server is shutting down, retry shortly.")
    static let connectionClosed = Unavailable(description: "The database connection closed, retry shortly.")

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// A connection error in one line, without the server's address.
    private static func summary(of error: any Error) -> String {
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] { return "\(psql.serverInfo?[.sqlState] ?? "") \(message)" }
            if let underlying = psql.underlying { return "\(psql.code): \(underlying)" }
            return "\(psql.code)"
        }
        return String(describing: error)
    }

    // MARK: Shutting down

    /// Closes the pool: waiting leases fail, idle connections close now and leased ones when they
    /// come back. Called by ``run()`` at graceful shutdown; tools call it when done.
    package func shutdown() async {
        let (idle, waiters) = state.withLock { state in
            state.closed = true
            defer {
                state.idle = []
                state.waiters = []
            }
            for connection in state.idle { state.live.remove(connection.id) }
            return (state.idle, state.waiters)
        }
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(throwing: Self.shutDown)
        }
        for connection in idle { try? await connection.close() }
    }
}

extension ConnectionPool: Service {
    /// Opens the minimum number of connections, then holds the pool open until graceful
    /// shutdown and closes it.
    package func run() async throws {
        perform(Effects(connect: state.withLock { $0.demand(minimum: pool.minimumConnections, maximum: pool.maximumConnections) }))
        if let seconds = pool.keepAliveSeconds {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(seconds))
                    await self.keepAlive()
                }
            }
        } else {
            try? await gracefulShutdown()
        }
        await shutdown()
    }

    /// Sends `SELECT 1` on every idle connection, so a NAT or firewall sees traffic on it; one that
    /// fails is closed and replaced.
    private func keepAlive() async {
        let idle = state.withLock { state in
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle {
            do {
                try await DatabaseConnection(
                    connection, loop: executor(for: connection), timers: statementTimers, prepares: pool.preparedStatements
                ).query(
                    "SELECT 1", logger: logger)
                release(connection)
            } catch {
                release(connection, after: error)
            }
        }
    }
}

extension ConnectionPool {
    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<PostgresConnection, any Error>
        var timer: Scheduled<Void>?
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Open connections, idle or leased, by id.
        var live: Set<Int> = []
        var connecting = 0
        var waiters: [Waiter] = []
        var nextID = 0
        /// Since when connection attempts fail.
        var downSince: ContinuousClock.Instant?
        /// Failed attempts in a row.
        var failures = 0
        var retryPending = false
        var closed = false

        /// How many connections to start opening now: enough for the minimum and for every
        /// waiter that no attempt in flight will serve, within the maximum; while the database is
        /// unreachable, one attempt at a time, paced by the back-off.
        mutating func demand(minimum: Int, maximum: Int) -> Int {
            if closed { return 0 }
            let wanted = max(minimum, min(maximum, live.count + waiters.count))
            if downSince != nil {
                guard !retryPending, connecting == 0, wanted > live.count else { return 0 }
                connecting = 1
                return 1
            }
            let missing = max(0, min(wanted, maximum) - live.count - connecting)
            connecting += missing
            return missing
        }
    }

    /// What a state change asks for once the lock is released.
    private struct Effects {
        var resume: [(CheckedContinuation<PostgresConnection, any Error>, Result<PostgresConnection, any Error>)] = []
        var cancel: [Scheduled<Void>] = []
        var close: [PostgresConnection] = []
        var connect = 0
        var lost: String?
        var recovered: Duration?
        var retryAfter: Duration?
    }
}

extension Array where Element == PostgresRow {
    /// Every row decoded as `types`, as `PostgresRowSequence.decode` does for a stream.
    package func decode<each Column: PostgresDecodable>(_ types: (repeat each Column).Type) throws -> [(repeat each Column)] {
        try map { try $0.decode(types) }
    }
}
