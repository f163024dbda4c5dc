package import AccountCore
package import Logging

/// The development transport: sends nothing and logs the recipient, subject and action link at
/// `notice` level, so a local run can follow the link from its own log. Never use it in production:
/// the link is a bearer credential.
package struct LogTransport: MailTransport {
    private let logger: Logger

    /// Creates the transport; messages go to `logger`.
    package init(logger: Logger) {
        self.logger = logger
    }

    /// Logs `message` (recipient, subject, link) instead of sending it.
    package func send(_ message: EmailMessage) async throws {
        logger.notice(
            "email not sent (log transport): \(message.subject)",
            metadata: ["kind": "\(message.kind.rawValue)", "to": "\(message.to)", "link": "\(message.link)"]
        )
    }
}
