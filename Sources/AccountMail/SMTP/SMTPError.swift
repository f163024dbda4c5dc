import AccountCore

/// Why ``SMTPTransport`` could not hand a message to the relay. Descriptions are short and never
/// carry credentials or the message body, so the outbox can store them as `last_error`.
package enum SMTPError: Error, Equatable, CustomStringConvertible {
    /// The TCP connection (or the implicit TLS session) could not be established.
    case connectFailed(String)
    /// No reply within the command timeout.
    case timedOut(step: String)
    /// The connection dropped before the reply.
    case connectionClosed(step: String)
    /// A network or TLS failure during a step.
    case network(step: String, detail: String)
    /// The relay answered with an unexpected code.
    case rejected(step: String, code: Int, text: String)
    /// `startTLS` is `.required` and the relay does not offer `STARTTLS`.
    case startTLSUnavailable
    /// Credentials are configured but the connection is not encrypted (see `allowInsecureAuth`).
    case insecureAuthRefused
    /// The relay offers no authentication mechanism this client speaks (PLAIN, LOGIN).
    case authMechanismUnsupported(offered: String)
    /// The relay refused the credentials.
    case authenticationFailed(code: Int, text: String)
    /// A non-ASCII address needs the relay's `SMTPUTF8` extension, which it does not offer.
    case smtpUTF8Unsupported
    /// The relay's reply could not be parsed.
    case malformedReply(String)

    /// One line for logs and `last_error`.
    package var description: String {
        switch self {
        case .connectFailed(let detail): "SMTP: could not connect: \(detail)"
        case .timedOut(let step): "SMTP: no reply to \(step) in time"
        case .connectionClosed(let step): "SMTP: the relay closed the connection during \(step)"
        case .network(let step, let detail): "SMTP: network or TLS failure (\(step)): \(detail)"
        case .rejected(let step, let code, let text): "SMTP: \(step) rejected: \(code) \(text)"
        case .startTLSUnavailable: "SMTP: the relay does not offer STARTTLS and starttls=required"
        case .insecureAuthRefused: "SMTP: refusing to send credentials without TLS (allow_insecure_auth is off)"
        case .authMechanismUnsupported(let offered): "SMTP: no supported AUTH mechanism (the relay offers: \(offered))"
        case .authenticationFailed(let code, let text): "SMTP: authentication failed: \(code) \(text)"
        case .smtpUTF8Unsupported: "SMTP: a non-ASCII address needs SMTPUTF8, which the relay does not offer"
        case .malformedReply(let detail): "SMTP: malformed reply: \(detail)"
        }
    }
}

extension SMTPError: DeliveryFailure {
    /// A 5xx reply to this message's recipient or content (RFC 5321 §4.2.1: "permanent negative
    /// completion", e.g. 550 no such mailbox, 554 rejected as spam): sending it again cannot help.
    /// Connection, TLS, credential and sender-policy failures stay retryable: they are about the
    /// relay or its configuration, and the queue should drain once they are fixed.
    package var isPermanent: Bool {
        guard case .rejected(let step, let code, _) = self else { return false }
        return (500...599).contains(code) && ["RCPT TO", "DATA", "end of data"].contains(step)
    }
}
