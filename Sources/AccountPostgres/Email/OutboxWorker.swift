package import AccountCore
import Foundation
package import Logging
import PostgresNIO
import ServiceLifecycle

/// Delivers the email in `email_outbox`: claims one due row at a time, hands it to the transport,
/// then erases the link-bearing bodies (keeping the subject and the delivery record).
///
/// Each row is claimed with `SELECT … FOR UPDATE SKIP LOCKED` and sent while that transaction
/// holds the row lock; the outcome is written and committed in the same transaction. So replicas
/// never send one row concurrently, and a replica that dies mid-send simply releases the lock: the
/// row is still `pending` and the next worker takes it at once, with no lease to tune. The cost is
/// one pooled connection (and an open transaction) per worker for the length of a send, which the
/// transports bound with their own timeouts and the worker with ``sendTimeout``. Delivery is
/// at-least-once: a send that succeeds right before the database is lost is sent again.
///
/// A failed send counts an attempt, records a short error, and backs off exponentially with
/// jitter; after `maxAttempts` the row is `failed` (kept for the record, bodies erased). The worker
/// polls every `pollInterval` and also wakes on `NOTIFY` of ``PostgresOutbox/channel``, which it
/// listens to on one pooled connection held for its lifetime.
package struct OutboxWorker: Service {
    private let database: ConnectionPool
    private let transport: any MailTransport
    private let logger: Logger
    private let pollInterval: Duration
    private let maxAttempts: Int
    private let baseBackoff: Duration
    private let maxBackoff: Duration
    private let clock: any WallClock
    /// Called each time the notification listener is listening (for tests: a row queued after it
    /// wakes the worker by its notification, not by a poll).
    private let onListening: @Sendable () async -> Void

    /// The longest one send may hold its row before it counts as a failed attempt.
    package static let sendTimeout = Duration.seconds(300)

    /// Creates a worker. `maxAttempts` counts sends (the first one included); the delay after the
    /// n-th failure is `min(baseBackoff · 2^(n-1), maxBackoff)`, scaled by a random factor in [0.5, 1].
    /// `clock` decides which rows are due and when a failed one is due again.
    package init(
        database: ConnectionPool,
        transport: any MailTransport,
        logger: Logger,
        pollInterval: Duration = .seconds(1),
        maxAttempts: Int = 20,
        baseBackoff: Duration = .seconds(1),
        maxBackoff: Duration = .seconds(300),
        clock: any WallClock = SystemClock(),
        onListening: @escaping @Sendable () async -> Void = {}
    ) {
        self.onListening = onListening
        self.clock = clock
        self.database = database
        self.transport = transport
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
                        logger.warning("email outbox: could not process the queue", metadata: ["error": "\(error)"])
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
            let rows = try await connection.query(
                """
                SELECT id, kind, recipient, subject, body_text, body_html, attempts FROM email_outbox
                WHERE status = 'pending' AND next_attempt_at <= \(clock.now()) AND id <> ALL(\(excluded))
                ORDER BY next_attempt_at, id LIMIT 1
                FOR UPDATE SKIP LOCKED
                """,
                logger: logger
            )
            var claimed: (id: Int64, message: EmailMessage?, attempts: Int)?
            for try await (id, kind, recipient, subject, text, html, attempts) in rows.decode(
                (Int64, String, String, String, String?, String?, Int32).self)
            {
                var message: EmailMessage?
                if let kind = EmailKind(rawValue: kind), let text, let html {
                    message = EmailMessage(
                        kind: kind, to: recipient, subject: subject, textBody: text, htmlBody: html,
                        link: PostgresOutbox.link(inTextBody: text))
                }
                claimed = (id, message, Int(attempts))
            }
            guard let claimed else { return nil }
            var logger = logger
            logger[metadataKey: "outbox_id"] = "\(claimed.id)"
            guard let message = claimed.message else {
                try await record(
                    failure: "unreadable row (unknown kind or no body)", id: claimed.id, attempt: claimed.attempts + 1, final: true,
                    on: connection)
                logger.error("email outbox: row cannot be sent; marked failed")
                return (claimed.id, false)
            }
            let attempt = claimed.attempts + 1
            do {
                try await send(message)
            } catch {
                // Cancelled mid-send: roll back, so the attempt is not counted and the row stays due.
                if Task.isCancelled { throw error }
                let reason = Self.summary(of: error, link: message.link)
                let permanent = (error as? any DeliveryFailure)?.isPermanent == true
                let final = permanent || attempt >= maxAttempts
                try await record(failure: reason, id: claimed.id, attempt: attempt, final: final, on: connection)
                if final {
                    logger.error(
                        "email outbox: giving up",
                        metadata: [
                            "kind": "\(message.kind.rawValue)", "attempts": "\(attempt)", "error": "\(reason)",
                            "permanent": "\(permanent)",
                        ])
                } else {
                    logger.warning(
                        "email outbox: send failed; will retry",
                        metadata: ["kind": "\(message.kind.rawValue)", "attempts": "\(attempt)", "error": "\(reason)"])
                }
                return (claimed.id, false)
            }
            try await connection.query(
                """
                UPDATE email_outbox SET status = 'sent', sent_at = \(clock.now()), attempts = attempts + 1,
                    body_text = NULL, body_html = NULL
                WHERE id = \(claimed.id)
                """,
                logger: logger
            )
            logger.info("email outbox: sent", metadata: ["kind": "\(message.kind.rawValue)", "attempts": "\(attempt)"])
            return (claimed.id, true)
        }
    }

    /// Counts a failed attempt: reschedules the row with backoff, or marks it failed and erases it.
    private func record(failure reason: String, id: Int64, attempt: Int, final: Bool, on connection: DatabaseConnection) async throws {
        if final {
            try await connection.query(
                """
                UPDATE email_outbox SET status = 'failed', attempts = attempts + 1, last_error = \(reason),
                    body_text = NULL, body_html = NULL
                WHERE id = \(id)
                """,
                logger: logger
            )
        } else {
            let due = clock.now().addingTimeInterval(Self.seconds(backoff(afterFailure: attempt)))
            try await connection.query(
                """
                UPDATE email_outbox SET attempts = attempts + 1, last_error = \(reason),
                    next_attempt_at = \(due)
                WHERE id = \(id)
                """,
                logger: logger
            )
        }
    }

    /// The transport's send, bounded by ``sendTimeout`` (for transports that never give up).
    private func send(_ message: EmailMessage) async throws {
        let transport = self.transport
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await transport.send(message) }
            group.addTask {
                try await Task.sleep(for: Self.sendTimeout)
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

    /// A one-line, bounded description of a send error, with the link (the one secret) removed.
    private static func summary(of error: any Error, link: String) -> String {
        var text = String(describing: error)
        if !link.isEmpty { text = text.replacing(link, with: "<link>") }
        text = String(text.map { $0.isNewline ? " " : $0 })
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
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
                    try await connection.listen(on: PostgresOutbox.channel) { notifications in
                        backoff = .milliseconds(100)
                        if let since = lostAt {
                            logger.notice(
                                "email outbox: listening again", metadata: ["down_ms": "\((ContinuousClock.now - since).milliseconds)"])
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
                        "email outbox: notification listener lost its connection; polling until it is back",
                        metadata: ["error": "\(String(describing: error).prefix(200))"])
                }
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(10))
        }
    }
}

/// A send that outlived ``OutboxWorker/sendTimeout``.
private struct SendTimedOut: Error, CustomStringConvertible {
    var description: String { "the transport did not finish within \(OutboxWorker.sendTimeout)" }
}
