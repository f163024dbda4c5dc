/// Delivers email (log, SMTP relay, webhook). Throwing means "not delivered, try again later",
/// unless the error is a ``DeliveryFailure`` that says no later attempt can deliver it.
package protocol MailTransport: Sendable {
    /// Sends one message.
    func send(_ message: EmailMessage) async throws
}

/// A send error that knows whether retrying could ever deliver this message. The outbox gives up
/// at once on a permanent one (a relay refusing this recipient or this content for good) instead
/// of retrying it for hours; every other error is retried with backoff.
package protocol DeliveryFailure: Error {
    /// Whether the same message would be refused again, whenever it is sent.
    var isPermanent: Bool { get }
}
