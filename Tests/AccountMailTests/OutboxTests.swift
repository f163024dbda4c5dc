import AccountCore
import AccountMail
import AccountPostgres
import AccountTesting
import Foundation
import Logging
import PostgresNIO
import Testing

// A guard against a hang, not a speed check: the whole suite on two cores can take minutes.
@Suite("Email outbox and delivery worker against real PostgreSQL", .timeLimit(.minutes(5)))
struct OutboxTests {
    static let logger = TestDatabase.logger

    static func message(to: String = "ann@example.com", kind: EmailKind = .verifyEmail) -> EmailMessage {
        EmailTemplates.message(
            kind: kind, to: to, link: "https://auth.example.com/__/auth/action?mode=x&oobCode=\(UUID().uuidString)", lang: "en",
            productName: "Acme")
    }

    /// One `email_outbox` row as the tests look at it.
    struct Row {
        var status: String
        var attempts: Int
        var subject: String
        var bodyText: String?
        var bodyHTML: String?
        var lastError: String?
        var sent: Bool
        /// `next_attempt_at` minus the test clock's now, in seconds.
        var dueIn: Double
    }

    /// The worker's clock in these tests: a day ahead of the database's, so a row enqueued (at
    /// PostgreSQL's `now()`) or made due is due at once, and moved only by the test.
    static func testClock() -> ManualClock { ManualClock(start: Date().addingTimeInterval(86_400)) }

    static func rows(_ client: ConnectionPool, clock: ManualClock = testClock()) async throws -> [Row] {
        let rows = try await client.query(
            """
            SELECT status, attempts, subject, body_text, body_html, last_error, sent_at IS NOT NULL,
                extract(epoch FROM next_attempt_at - \(clock.now()))::float8
            FROM email_outbox ORDER BY id
            """)
        var result: [Row] = []
        for (status, attempts, subject, text, html, error, sent, dueIn) in try rows.decode(
            (String, Int32, String, String?, String?, String?, Bool, Double).self)
        {
            result.append(
                Row(
                    status: status, attempts: Int(attempts), subject: subject, bodyText: text, bodyHTML: html, lastError: error, sent: sent,
                    dueIn: dueIn))
        }
        return result
    }

    static func enqueue(_ message: EmailMessage, _ client: ConnectionPool) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await PostgresOutbox.enqueue(message, on: connection, logger: logger)
        }
    }

    /// Makes every pending row due now (instead of waiting out the backoff).
    static func makeDue(_ client: ConnectionPool) async throws {
        try await client.query("UPDATE email_outbox SET next_attempt_at = now() WHERE status = 'pending'")
    }

    @Test("a message enqueued in a transaction that rolls back is never queued")
    func rollbackQueuesNothing() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            await #expect(throws: (any Error).self) {
                try await client.withTransaction(logger: Self.logger) { connection in
                    try await PostgresOutbox.enqueue(Self.message(), on: connection, logger: Self.logger)
                    throw TestTransport.RelayDown()
                }
            }
            let rows = try await Self.rows(client)
            #expect(rows.isEmpty)
            let transport = TestTransport()
            let sent = try await OutboxWorker(database: client, transport: transport, logger: Self.logger).drainOnce()
            #expect(sent == 0)
            #expect(transport.attempts == 0)
        }
    }

    @Test("a committed message is sent once, marked sent, and its link-bearing bodies erased")
    func commitThenSend() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let message = Self.message()
            try await Self.enqueue(message, client)
            let queued = try #require(try await Self.rows(client).first)
            #expect(queued.status == "pending" && queued.attempts == 0 && queued.bodyText == message.textBody)

            let transport = TestTransport()
            let worker = OutboxWorker(database: client, transport: transport, logger: Self.logger)
            #expect(try await worker.drainOnce() == 1)
            #expect(transport.delivered == [message], "the worker hands over the message as enqueued, link included")

            let row = try #require(try await Self.rows(client).first)
            #expect(row.status == "sent")
            #expect(row.attempts == 1)
            #expect(row.sent)
            #expect(row.subject == message.subject)
            #expect(row.bodyText == nil && row.bodyHTML == nil)
            #expect(try await worker.drainOnce() == 0)
            #expect(transport.attempts == 1)
        }
    }

    @Test("a message whose text body does not carry its link is refused")
    func refusesMessageWithoutLink() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            var message = Self.message()
            message.textBody = "no link here"
            await #expect(throws: (any Error).self) { try await Self.enqueue(message, client) }
            let rows = try await Self.rows(client)
            #expect(rows.isEmpty)
        }
    }

    @Test("a transport that fails twice: attempts and backoff are recorded, then it is delivered exactly once")
    func retriesWithBackoff() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let message = Self.message()
            try await Self.enqueue(message, client)
            let transport = TestTransport(failures: 2)
            let clock = Self.testClock()
            let worker = OutboxWorker(
                database: client, transport: transport, logger: Self.logger, baseBackoff: .seconds(10), maxBackoff: .seconds(300),
                clock: clock)

            // The delay counts from the failure on the worker's clock, which only the test moves.
            #expect(try await worker.drainOnce() == 0)
            var row = try #require(try await Self.rows(client, clock: clock).first)
            #expect(row.status == "pending" && row.attempts == 1)
            #expect(row.lastError == "relay down (test)")
            #expect(row.bodyText == message.textBody)
            #expect((5.0...10.0).contains(row.dueIn), "first delay in [base/2, base]: \(row.dueIn)")
            // Not due until its delay has passed on the worker's clock.
            clock.advance(row.dueIn - 0.5)
            #expect(try await worker.drainOnce() == 0, "not due yet")
            #expect(transport.attempts == 1, "a row not yet due was attempted")

            // A millisecond past: the database keeps instants to the microsecond, and dueIn came back
            // through a float, so "exactly due" could round either way.
            clock.advance(0.501)
            #expect(try await worker.drainOnce() == 0)
            row = try #require(try await Self.rows(client, clock: clock).first)
            #expect(row.status == "pending" && row.attempts == 2)
            #expect((10.0...20.0).contains(row.dueIn), "second delay in [base, 2·base]: \(row.dueIn)")

            clock.advance(row.dueIn + 0.001)
            #expect(try await worker.drainOnce() == 1)
            row = try #require(try await Self.rows(client).first)
            #expect(row.status == "sent" && row.attempts == 3 && row.sent)
            #expect(row.bodyText == nil && row.bodyHTML == nil)
            #expect(transport.delivered == [message])

            try await Self.makeDue(client)
            #expect(try await worker.drainOnce() == 0)
            #expect(transport.attempts == 3)
        }
    }

    @Test("after maxAttempts the row is failed, kept, and erased")
    func givesUp() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await Self.enqueue(Self.message(), client)
            let transport = TestTransport(failures: .max)
            let worker = OutboxWorker(database: client, transport: transport, logger: Self.logger, maxAttempts: 2)
            #expect(try await worker.drainOnce() == 0)
            try await Self.makeDue(client)
            #expect(try await worker.drainOnce() == 0)
            let row = try #require(try await Self.rows(client).first)
            #expect(row.status == "failed" && row.attempts == 2)
            #expect(row.lastError == "relay down (test)")
            #expect(row.bodyText == nil && row.bodyHTML == nil)
            #expect(!row.subject.isEmpty)
            try await Self.makeDue(client)
            #expect(try await worker.drainOnce() == 0)
            #expect(transport.attempts == 2)
        }
    }

    @Test("a permanent refusal (SMTP 5xx to the recipient or content) fails at once; a 4xx and a refused sender are retried")
    func permanentFailure() async throws {
        #expect(SMTPError.rejected(step: "RCPT TO", code: 550, text: "no such user").isPermanent)
        #expect(SMTPError.rejected(step: "end of data", code: 554, text: "spam").isPermanent)
        #expect(!SMTPError.rejected(step: "RCPT TO", code: 451, text: "try later").isPermanent)
        #expect(!SMTPError.rejected(step: "MAIL FROM", code: 550, text: "sender not allowed").isPermanent)
        #expect(!SMTPError.authenticationFailed(code: 535, text: "bad credentials").isPermanent)
        #expect(!SMTPError.connectFailed("refused").isPermanent)

        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await Self.enqueue(Self.message(to: "gone@example.com"), client)
            try await Self.enqueue(Self.message(to: "busy@example.com"), client)
            let transport = RefusingTransport(refusals: [
                "gone@example.com": .rejected(step: "RCPT TO", code: 550, text: "5.1.1 no such user"),
                "busy@example.com": .rejected(step: "RCPT TO", code: 451, text: "4.3.0 try again later"),
            ])
            let worker = OutboxWorker(database: client, transport: transport, logger: Self.logger, maxAttempts: 5)
            #expect(try await worker.drainOnce() == 0)
            let rows = try await Self.rows(client)
            #expect(rows.map(\.status) == ["failed", "pending"])
            #expect(rows.map(\.attempts) == [1, 1])
            #expect(rows[0].lastError == "SMTP: RCPT TO rejected: 550 5.1.1 no such user")
            #expect(rows[0].bodyText == nil && rows[0].bodyHTML == nil, "a failed row is erased")
            try await Self.makeDue(client)
            #expect(try await worker.drainOnce() == 0)
            #expect(try await Self.rows(client).map(\.attempts) == [1, 2], "only the 4xx is tried again")
        }
    }

    @Test("the backoff doubles, is capped, and is jittered within [d/2, d]")
    func backoffSchedule() throws {
        let worker = OutboxWorker(
            database: try ConnectionPool(url: try DatabaseURL("postgres://nobody@localhost/none"), logger: Self.logger),
            transport: TestTransport(), logger: Self.logger, baseBackoff: .seconds(1), maxBackoff: .seconds(300))
        for (failure, full) in [(1, 1), (2, 2), (3, 4), (9, 256), (10, 300), (64, 300), (10_000, 300)] {
            let delay = worker.backoff(afterFailure: failure)
            #expect(delay >= .seconds(full) / 2 && delay <= .seconds(full), "failure \(failure): \(delay)")
        }
    }

    @Test("two workers draining one queue concurrently send every message exactly once")
    func concurrentWorkers() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let messages = (0..<30).map { Self.message(to: "user\($0)@example.com") }
            for message in messages { try await Self.enqueue(message, client) }
            let transports = [TestTransport(delay: .milliseconds(5)), TestTransport(delay: .milliseconds(5))]
            let sent = try await withThrowingTaskGroup(of: Int.self) { group in
                for transport in transports {
                    group.addTask { try await OutboxWorker(database: client, transport: transport, logger: Self.logger).drainOnce() }
                }
                return try await group.reduce(0, +)
            }
            let delivered = transports.flatMap(\.delivered)
            #expect(sent == 30)
            #expect(delivered.count == 30)
            #expect(Set(delivered.map(\.to)).count == 30)
            #expect(transports.allSatisfy { $0.attempts > 0 }, "both workers took part")
            #expect(try await Self.rows(client).allSatisfy { $0.status == "sent" })
        }
    }

    @Test("the running worker wakes on NOTIFY, long before its next poll, and stops when cancelled")
    func wakesOnNotify() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let transport = TestTransport()
            let (listening, isListening) = AsyncStream.makeStream(of: Void.self)
            let worker = OutboxWorker(
                database: client, transport: transport, logger: Self.logger, pollInterval: .seconds(60),
                onListening: { isListening.yield() })
            let running = Task { try await worker.run() }
            // Once the listener listens, a row queued is found by its notification (the poll is a minute away).
            var listened = listening.makeAsyncIterator()
            _ = await listened.next()
            let message = Self.message()
            try await Self.enqueue(message, client)
            #expect(try await eventually { transport.delivered.count == 1 })
            #expect(transport.delivered == [message])
            running.cancel()
            try await running.value
        }
    }

    @Test("a dead relay never loses a message: retries until the relay comes up, then delivers")
    func deadRelayThenDelivery() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let port = try freeLoopbackPort()
            let transport = try SMTPTransport(configuration: SMTPTransportTests.configuration(port: port), logger: Self.logger)
            let worker = OutboxWorker(
                database: client, transport: transport, logger: Self.logger, pollInterval: .milliseconds(100),
                baseBackoff: .milliseconds(100), maxBackoff: .milliseconds(200))
            let message = Self.message(kind: .passwordReset)
            try await Self.enqueue(message, client)
            let running = Task { try await worker.run() }

            #expect(try await eventually { try await Self.rows(client).first.map { $0.attempts >= 3 } ?? false })
            let waiting = try #require(try await Self.rows(client).first)
            #expect(waiting.status == "pending")
            #expect(waiting.lastError?.contains("could not connect") == true, "\(waiting.lastError ?? "nil")")
            #expect(waiting.bodyText == message.textBody)

            try await withSMTPRelay(port: port) { relay in
                #expect(try await eventually { try await Self.rows(client).first?.status == "sent" })
                let received = try await relay.waitForMessages(1)
                #expect(received.count == 1)
                #expect(received.first?.subject == message.subject)
                #expect(received.first?.text?.contains(message.link) == true)
                let row = try #require(try await Self.rows(client).first)
                #expect(row.bodyText == nil && row.bodyHTML == nil)
                #expect(row.attempts >= 4)
            }
            running.cancel()
            try await running.value
        }
    }
}
