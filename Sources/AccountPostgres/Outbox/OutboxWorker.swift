package import AccountCore
package import Foundation
package import Logging
import PostgresNIO
import ServiceLifecycle

/// Delivers the messages of one outbox table (email, SMS; ``OutboxQueue``): claims one due row at
/// a time, hands it to the transport, then erases what must not outlive the delivery (a link, a
/// code), keeping the delivery record.
///
/// Each row is claimed with `SELECT … FOR UPDATE SKIP LOCKED` and sent while that transaction
/// holds the row lock; the outcome is written and committed in the same transaction. So replicas
/// never send one row concurrently, and a replica that dies mid-send simply releases the lock: the
/// row is still `pending` and the next worker takes it at once, with no lease to tune. The cost is
/// one pooled connection (and an open transaction) per worker for the length of a send, which the
/// transports bound with their own timeouts and the worker with ``OutboxTimeouts/sendTimeout``.
/// Delivery is at-least-once: a send that succeeds right before the database is lost is sent
/// again (the SMS webhook carries a message id for that).
///
/// A failed send counts an attempt, records a short error, and backs off exponentially with
/// jitter; after `maxAttempts`, a permanent refusal, or when a retry could no longer be of use, the
/// row is `failed` (kept for the record, its secret erased). The worker polls every `pollInterval`
/// and also wakes on `NOTIFY` of the queue's channel, which it listens to on one pooled connection
/// held for its lifetime.
package struct OutboxWorker<Queue: OutboxQueue>: Service {
    private let database: ConnectionPool
    private let queue: Queue
    private let logger: Logger
    private let pollInterval: Duration
    private let maxAttempts: Int
    private let baseBackoff: Duration
    private let maxBackoff: Duration
    private let clock: any WallClock
    /// Called each time the notification listener is listening (for tests: a row queued after it
    /// wakes the worker by its notification, not by a poll).
    private let onListening: @Sendable () async -> Void
    /// Where attempts and their outcomes are counted, labelled with the queue and the transport.
    private let telemetry: Telemetry
    private let labels: (queue: String, transport: String)

    /// Creates a worker. `maxAttempts` counts sends (the first one included); the delay after the
    /// n-th failure is `min(baseBackoff · 2^(n-1), maxBackoff)`, scaled by a random factor in [0.5, 1].
    /// `clock` decides which rows are due and when a failed one is due again.
    package init(
        database: ConnectionPool,
        queue: Queue,
        logger: Logger,
        pollInterval: Duration = .seconds(1),
        maxAttempts: Int = 20,
        baseBackoff: Duration = .seconds(1),
        maxBackoff: Duration = .seconds(300),
        clock: any WallClock = SystemClock(),
        telemetry: Telemetry = .off,
        labels: (queue: String, transport: String) = ("mail", "other"),
        onListening: @escaping @Sendable () async -> Void = {}
    ) {
        self.telemetry = telemetry
        self.labels = labels
        self.onListening = onListening
        self.clock = clock
        self.database = database
        self.queue = queue
        self.logger = logger
        self.pollInterval = pollInterval
        self.maxAttempts = max(1, maxAttempts)
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
    }

    /// Runs until cancelled or shut down gracefully. A graceful shutdown lets the current send
    /// finish and stops before claiming the next row.
    package func run() async throws {
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        wake.yield()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: pollInterval)
                        wake.yield()
                    }
                }
                group.addTask { await listen(wake: wake) }
                for await _ in wakeups {
                    if Task.isCancelled || Task.isShuttingDownGracefully { break }
                    do {
                        _ = try await drain()
                    } catch {
                        if Task.isCancelled { break }
                        logger.warning("\(queue.name): could not process the queue", metadata: ["error": "\(error)"])
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            wake.finish()
        }
    }

    /// Processes every row due now, once each, and returns how many were sent (for tests and
    /// one-off runs). Rows that fail are rescheduled, not retried within the same call.
    package func drainOnce() async throws -> Int {
        try await drain()
    }

    // MARK: Processing

    private func drain() async throws -> Int {
        // Rows that failed in this pass are not taken again in it, even with a zero backoff (sent
        // rows are no longer pending, so the list stays as short as the failures).
        var failed: [Int64] = []
        var sent = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            guard let outcome = try await processNext(excluding: failed) else { break }
            if outcome.sent { sent += 1 } else { failed.append(outcome.id) }
        }
        return sent
    }

    /// Claims the next due row (skipping rows other workers hold and `excluded`), sends it and
    /// records the outcome, all in one transaction. Returns nil when nothing is due.
    private func processNext(excluding excluded: [Int64]) async throws -> (id: Int64, sent: Bool)? {
        try await database.withTransaction(logger: logger) { connection in
            let now = clock.now()
            guard let claimed = try await queue.claim(on: connection, now: now, excluding: excluded, logger: logger) else { return nil }
            var logger = logger
            logger[metadataKey: "outbox_id"] = "\(claimed.id)"
            let attempt = claimed.attempts + 1
            telemetry.count(.outboxAttempts, [labels.queue])
            guard let message = claimed.message else {
                telemetry.count(.outboxSends, [labels.queue, labels.transport, "failed"])
                try await queue.recordFailure(
                    id: claimed.id, reason: claimed.unreadable ?? "unreadable row", due: nil, on: connection, logger: logger)
                logger.error("\(queue.name): row cannot be sent; marked failed", metadata: ["reason": "\(claimed.unreadable ?? "")"])
                return (claimed.id, false)
            }
            do {
                try await TraceContext.$current.withValue(claimed.trace) { try await send(message) }
            } catch {
                // Cancelled mid-send: roll back, so the attempt is not counted and the row stays due.
                if Task.isCancelled { throw error }
                let reason = queue.summary(of: error, message: message)
                let permanent = (error as? any DeliveryFailure)?.isPermanent == true
                var due: Date? = now.addingTimeInterval(Self.seconds(backoff(afterFailure: attempt)))
                if permanent || attempt >= maxAttempts || !queue.mayRetry(message, at: due!) { due = nil }
                try await queue.recordFailure(id: claimed.id, reason: reason, due: due, on: connection, logger: logger)
                telemetry.count(.outboxSends, [labels.queue, labels.transport, due == nil ? "failed" : "retry"])
                if due == nil {
                    logger.error(
                        "\(queue.name): giving up",
                        metadata: [
                            "kind": "\(queue.kind(of: message))", "attempts": "\(attempt)", "error": "\(reason)",
                            "permanent": "\(permanent)",
                        ])
                } else {
                    logger.warning(
                        "\(queue.name): send failed; will retry",
                        metadata: ["kind": "\(queue.kind(of: message))", "attempts": "\(attempt)", "error": "\(reason)"])
                }
                return (claimed.id, false)
            }
            try await queue.markSent(id: claimed.id, now: now, on: connection, logger: logger)
            telemetry.count(.outboxSends, [labels.queue, labels.transport, "sent"])
            logger.info("\(queue.name): sent", metadata: ["kind": "\(queue.kind(of: message))", "attempts": "\(attempt)"])
            return (claimed.id, true)
        }
    }

    /// The queue's send, bounded by ``OutboxTimeouts/sendTimeout`` (for transports that never give up).
    private func send(_ message: Queue.Message) async throws {
        let queue = self.queue
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.deliver(message) }
            group.addTask {
                try await Task.sleep(for: OutboxTimeouts.sendTimeout)
                throw SendTimedOut()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// The delay after the `failure`-th failed attempt: exponential, capped, with "equal jitter".
    package func backoff(afterFailure failure: Int) -> Duration {
        var delay = baseBackoff
        var doublings = max(0, failure - 1)
        while doublings > 0 && delay < maxBackoff {
            delay *= 2
            doublings -= 1
        }
        delay = min(delay, maxBackoff)
        return delay * Double.random(in: 0.5...1.0)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Wake-ups

    /// Wakes the loop on every `NOTIFY` of the outbox channel over a dedicated connection,
    /// re-listening after a lost one with back-off (100 ms doubling to 10 s); one log line when the
    /// channel is lost, one when it is back. The loop's own poll finds what arrives in between.
    private func listen(wake: AsyncStream<Void>.Continuation) async {
        var backoff = Duration.milliseconds(100)
        var lostAt: ContinuousClock.Instant?
        while !Task.isCancelled {
            do {
                let connection = try await database.connectDedicated(logger: logger)
                do {
                    try await connection.listen(on: queue.channel) { notifications in
                        backoff = .milliseconds(100)
                        if let since = lostAt {
                            logger.notice(
                                "\(queue.name): listening again", metadata: ["down_ms": "\((ContinuousClock.now - since).milliseconds)"])
                            lostAt = nil
                        }
                        // Anything queued while we were not listening is found by this wake-up.
                        wake.yield()
                        await onListening()
                        for try await _ in notifications { wake.yield() }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { return }
                if lostAt == nil {
                    lostAt = .now
                    logger.warning(
                        "\(queue.name): notification listener lost its connection; polling until it is back",
                        metadata: ["error": "\(String(describing: error).prefix(200))"])
                }
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(10))
        }
    }
}

/// The bounds every outbox shares.
package enum OutboxTimeouts {
    /// The longest one send may hold its row before it counts as a failed attempt.
    package static let sendTimeout = Duration.seconds(300)
}

/// A send that outlived ``OutboxTimeouts/sendTimeout``.
private struct SendTimedOut: Error, CustomStringConvertible {
    var description: String { "the transport did not finish within \(OutboxTimeouts.sendTimeout)" }
}

/// One table of messages the ``OutboxWorker`` delivers: how a due row is claimed, delivered, and
/// its outcome written (each on the worker's transaction, which holds the row's lock).
package protocol OutboxQueue: Sendable {
    associatedtype Message: Sendable
    /// For log lines: `email outbox`, `sms outbox`.
    var name: String { get }
    /// The `NOTIFY` channel that wakes the workers when a message is queued.
    var channel: String { get }
    /// The next due row not in `excluded`, locked (`FOR UPDATE SKIP LOCKED`); nil when none is due.
    func claim(on connection: DatabaseConnection, now: Date, excluding excluded: [Int64], logger: Logger) async throws
        -> ClaimedMessage<Message>?
    /// Hands the message to the transport.
    func deliver(_ message: Message) async throws
    /// Records a delivery and erases what must not outlive it.
    func markSent(id: Int64, now: Date, on connection: DatabaseConnection, logger: Logger) async throws
    /// Counts a failed attempt: due again at `due`, or (nil) given up for good and erased.
    func recordFailure(id: Int64, reason: String, due: Date?, on connection: DatabaseConnection, logger: Logger) async throws
    /// Whether a retry at `date` could still be of use (an SMS code dies at its expiry).
    func mayRetry(_ message: Message, at date: Date) -> Bool
    /// A one-line, bounded description of a send error, with the message's secrets removed.
    func summary(of error: any Error, message: Message) -> String
    /// The message's kind, for log lines.
    func kind(of message: Message) -> String
}

/// A row an ``OutboxQueue`` claimed.
package struct ClaimedMessage<Message: Sendable>: Sendable {
    package var id: Int64
    package var attempts: Int
    /// Nil for a row that cannot be delivered (with ``unreadable`` saying why).
    package var message: Message?
    package var unreadable: String?
    /// The trace context of the request that queued the message, for the transport's call.
    package var trace: TraceContext?

    package init(id: Int64, attempts: Int, message: Message?, unreadable: String? = nil, trace: TraceContext? = nil) {
        self.trace = trace
        self.id = id
        self.attempts = attempts
        self.message = message
        self.unreadable = unreadable
    }
}

extension OutboxQueue {
    package func mayRetry(_ message: Message, at date: Date) -> Bool { true }

    /// `error` on one bounded line, each of `secrets` replaced by `<redacted>`.
    package static func summary(of error: any Error, hiding secrets: [String]) -> String {
        var text = String(describing: error)
        for secret in secrets where !secret.isEmpty { text = text.replacing(secret, with: "<redacted>") }
        text = String(text.map { $0.isNewline ? " " : $0 })
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}
