package import AccountCore
package import Foundation
package import Logging
import PostgresNIO

/// Writes email into `email_outbox`, on the caller's connection, so a message is queued if and
/// only if the transaction that made its action code commits. ``OutboxWorker`` delivers it.
///
/// The table has no column for the link: it is recovered from the text body, where it must be the
/// first line that is a bare `http(s)://` URL (``EmailTemplates`` writes it that way); ``enqueue``
/// refuses a message that breaks this, so the worker always hands transports the right link.
package enum PostgresOutbox {
    /// The `NOTIFY` channel that wakes the workers when a message is queued.
    package static let channel = "accountd_outbox"

    /// A message the outbox cannot hold faithfully (a programming error, never user input).
    package struct InvalidMessage: Error, CustomStringConvertible {
        /// What is wrong, without the link.
        package var description: String
    }

    /// Queues `message` (status `pending`, due now) and notifies the workers. Runs on `connection`,
    /// so it commits or rolls back with the caller's transaction; the notification is delivered only
    /// on commit.
    package static func enqueue(_ message: EmailMessage, on connection: DatabaseConnection, logger: Logger) async throws {
        guard link(inTextBody: message.textBody) == message.link else {
            throw InvalidMessage(
                description: "a \(message.kind.rawValue) email must carry its link as the first URL line of the text body")
        }
        try await connection.query(
            """
            INSERT INTO email_outbox (kind, recipient, subject, body_text, body_html, status, next_attempt_at, traceparent, tracestate)
            VALUES (\(message.kind.rawValue), \(message.to), \(message.subject), \(message.textBody), \(message.htmlBody),
                'pending', now(), \(TraceContext.current?.traceparent), \(TraceContext.current?.state))
            """,
            logger: logger
        )
        try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger)
    }

    /// The action link of a text body: its first line that is a bare `http://` or `https://` URL,
    /// or "" when there is none.
    package static func link(inTextBody text: String) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let url = String(line.drop(while: blank).reversed().drop(while: blank).reversed())
            if (url.hasPrefix("https://") || url.hasPrefix("http://")) && !url.contains(where: \.isWhitespace) {
                return url
            }
        }
        return ""
    }
}

/// `email_outbox` as the ``OutboxWorker`` delivers it: the bodies, which carry the action link,
/// are erased once sent or given up.
package struct EmailOutboxQueue: OutboxQueue {
    private let transport: any MailTransport

    package init(transport: any MailTransport) { self.transport = transport }

    package var name: String { "email outbox" }
    package var channel: String { PostgresOutbox.channel }

    package func claim(on connection: DatabaseConnection, now: Date, excluding excluded: [Int64], logger: Logger) async throws
        -> ClaimedMessage<EmailMessage>?
    {
        let rows = try await connection.query(
            """
            SELECT id, kind, recipient, subject, body_text, body_html, attempts, traceparent, tracestate FROM email_outbox
            WHERE status = 'pending' AND next_attempt_at <= \(now) AND id <> ALL(\(excluded))
            ORDER BY next_attempt_at, id LIMIT 1
            FOR UPDATE SKIP LOCKED
            """,
            logger: logger
        )
        for try await (id, kind, recipient, subject, text, html, attempts, traceparent, tracestate) in rows.decode(
            (Int64, String, String, String, String?, String?, Int32, String?, String?).self)
        {
            let trace = TraceContext(traceparent: traceparent, tracestate: tracestate)
            guard let kind = EmailKind(rawValue: kind), let text, let html else {
                return ClaimedMessage(id: id, attempts: Int(attempts), message: nil, unreadable: "unknown kind or no body")
            }
            let message = EmailMessage(
                kind: kind, to: recipient, subject: subject, textBody: text, htmlBody: html, link: PostgresOutbox.link(inTextBody: text))
            return ClaimedMessage(id: id, attempts: Int(attempts), message: message, trace: trace)
        }
        return nil
    }

    package func deliver(_ message: EmailMessage) async throws { try await transport.send(message) }

    package func markSent(id: Int64, now: Date, on connection: DatabaseConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE email_outbox SET status = 'sent', sent_at = \(now), attempts = attempts + 1, body_text = NULL, body_html = NULL
            WHERE id = \(id)
            """,
            logger: logger)
    }

    package func recordFailure(id: Int64, reason: String, due: Date?, on connection: DatabaseConnection, logger: Logger) async throws {
        if let due {
            try await connection.query(
                "UPDATE email_outbox SET attempts = attempts + 1, last_error = \(reason), next_attempt_at = \(due) WHERE id = \(id)",
                logger: logger)
        } else {
            try await connection.query(
                """
                UPDATE email_outbox SET status = 'failed', attempts = attempts + 1, last_error = \(reason), body_text = NULL, body_html = NULL
                WHERE id = \(id)
                """,
                logger: logger)
        }
    }

    package func summary(of error: any Error, message: EmailMessage) -> String {
        Self.summary(of: error, hiding: [message.link])
    }

    package func kind(of message: EmailMessage) -> String { message.kind.rawValue }
}

extension OutboxWorker where Queue == EmailOutboxQueue {
    /// The email outbox's worker, delivering through `transport`.
    package init(
        database: ConnectionPool, transport: any MailTransport, logger: Logger, pollInterval: Duration = .seconds(1), maxAttempts: Int = 20,
        baseBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(300), clock: any WallClock = SystemClock(),
        telemetry: Telemetry = .off, transportLabel: String = "other", onListening: @escaping @Sendable () async -> Void = {}
    ) {
        self.init(
            database: database, queue: EmailOutboxQueue(transport: transport), logger: logger, pollInterval: pollInterval,
            maxAttempts: maxAttempts, baseBackoff: baseBackoff, maxBackoff: maxBackoff, clock: clock, telemetry: telemetry,
            labels: ("mail", transportLabel), onListening: onListening)
    }
}
