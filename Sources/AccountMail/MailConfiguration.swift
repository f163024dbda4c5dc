package import AccountCore
import Foundation
package import Logging

/// Chooses and builds the mail transport from the executable's environment (read once, at the
/// edge, and passed in):
///
/// - `ACCOUNTD_MAIL_TRANSPORT`: `log` (the default: links go to the log), `smtp` or `webhook`.
/// - `smtp`: `ACCOUNTD_SMTP_URL` (`smtp://user:pass@host:587?starttls=required`, or `smtps://…`),
///   and the sender in `ACCOUNTD_MAIL_FROM` or the URL's `from=` (one of them, not both).
/// - `webhook`: `ACCOUNTD_WEBHOOK_URL` and `ACCOUNTD_WEBHOOK_SECRET` (at least 16 characters).
package enum MailConfiguration {
    /// A missing or unusable setting; the message names the variable and never echoes a secret.
    package struct Invalid: Error, CustomStringConvertible {
        /// What to fix.
        package var description: String
    }

    /// The transport the environment asks for.
    package static func makeTransport(from environment: [String: String], logger: Logger) throws -> any MailTransport {
        let kind = (environment["ACCOUNTD_MAIL_TRANSPORT"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        switch kind {
        case "", "log":
            logger.info("mail: log transport (messages and their links are logged, nothing is sent)")
            return LogTransport(logger: logger)
        case "smtp":
            let configuration = try smtpConfiguration(from: environment)
            let transport: SMTPTransport
            do {
                transport = try SMTPTransport(configuration: configuration, logger: logger)
            } catch let error as SMTPError {
                throw Invalid(description: "ACCOUNTD_SMTP_URL: \(error)")
            }
            logger.info("mail: SMTP transport", metadata: ["relay": "\(configuration)"])
            return transport
        case "webhook":
            let url = try required("ACCOUNTD_WEBHOOK_URL", in: environment)
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme?.lowercased() ?? ""),
                components.host?.isEmpty == false
            else {
                throw Invalid(description: "ACCOUNTD_WEBHOOK_URL must be an http:// or https:// URL")
            }
            let secret = try required("ACCOUNTD_WEBHOOK_SECRET", in: environment)
            guard secret.count >= 16 else {
                throw Invalid(description: "ACCOUNTD_WEBHOOK_SECRET must be at least 16 characters")
            }
            if components.scheme?.lowercased() == "http" && !["localhost", "127.0.0.1", "::1"].contains(components.host ?? "") {
                logger.warning("mail: ACCOUNTD_WEBHOOK_URL is plain http; action links will cross the network unencrypted")
            }
            logger.info("mail: webhook transport", metadata: ["host": "\(components.host ?? "")"])
            return WebhookTransport(url: url, secret: secret)
        default:
            throw Invalid(description: "ACCOUNTD_MAIL_TRANSPORT must be log, smtp or webhook (got \"\(kind.prefix(40))\")")
        }
    }

    /// The SMTP settings from `ACCOUNTD_SMTP_URL` and `ACCOUNTD_MAIL_FROM`.
    package static func smtpConfiguration(from environment: [String: String]) throws -> SMTPConfiguration {
        let url = try required("ACCOUNTD_SMTP_URL", in: environment)
        let from = environment["ACCOUNTD_MAIL_FROM"].flatMap { $0.isEmpty ? nil : $0 }
        let configuration: SMTPConfiguration
        do {
            configuration = try SMTPConfiguration(url: url, defaultFrom: from)
        } catch let error as SMTPConfiguration.ParseError {
            throw Invalid(description: "ACCOUNTD_SMTP_URL: \(error)\(from == nil ? " (or set ACCOUNTD_MAIL_FROM)" : "")")
        } catch {
            throw Invalid(description: "the sender (ACCOUNTD_MAIL_FROM or from= in ACCOUNTD_SMTP_URL): \(error)")
        }
        if let from, configuration.from != from {
            throw Invalid(description: "the sender is set twice (ACCOUNTD_MAIL_FROM and from= in ACCOUNTD_SMTP_URL): keep one")
        }
        return configuration
    }

    private static func required(_ name: String, in environment: [String: String]) throws -> String {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            throw Invalid(
                description: "\(name) is not set (required when ACCOUNTD_MAIL_TRANSPORT=\(environment["ACCOUNTD_MAIL_TRANSPORT"] ?? ""))")
        }
        return value
    }
}
