package import AccountCore
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
            INSERT INTO email_outbox (kind, recipient, subject, body_text, body_html, status, next_attempt_at)
            VALUES (\(message.kind.rawValue), \(message.to), \(message.subject), \(message.textBody), \(message.htmlBody),
                'pending', now())
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
