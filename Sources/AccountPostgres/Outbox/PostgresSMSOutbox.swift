package import AccountCore
package import Foundation
package import Logging
import PostgresNIO

/// `sms_outbox` (mfa-phone-tenants.md §A.7) as the ``OutboxWorker`` delivers it: the message is
/// sealed at rest (it holds the code), opened only to hand it to the transport, and erased once
/// delivered, refused for good, or past the code's expiry (no SMS is sent for a dead code).
package struct PostgresSMSOutbox: OutboxQueue {
    /// The `NOTIFY` channel that wakes the workers when an SMS is queued.
    package static let channel = "accountd_sms_outbox"

    private let transport: any SMSTransport
    private let sealer: any SecretSealing

    package init(transport: any SMSTransport, sealer: any SecretSealing) {
        self.transport = transport
        self.sealer = sealer
    }

    package var name: String { "sms outbox" }
    package var channel: String { Self.channel }

    package func claim(on connection: DatabaseConnection, now: Date, excluding excluded: [Int64], logger: Logger) async throws
        -> ClaimedMessage<SMSMessage>?
    {
        let rows = try await connection.query(
            """
            SELECT id, message_id, payload_sealed, attempts, expires_at, traceparent, tracestate FROM sms_outbox
            WHERE status = 'pending' AND next_attempt_at <= \(now) AND id <> ALL(\(excluded))
            ORDER BY next_attempt_at, id LIMIT 1
            FOR UPDATE SKIP LOCKED
            """,
            logger: logger)
        for try await (id, messageID, sealed, attempts, expiresAt, traceparent, tracestate) in rows.decode(
            (Int64, String, Data?, Int32, Date, String?, String?).self)
        {
            guard expiresAt > now else {
                return ClaimedMessage(id: id, attempts: Int(attempts), message: nil, unreadable: "the code expired before delivery")
            }
            guard let sealed, let plain = try? sealer.open(Array(sealed), context: SealedSMS.context(messageID)) else {
                return ClaimedMessage(id: id, attempts: Int(attempts), message: nil, unreadable: "the payload cannot be opened")
            }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            guard let message = try? decoder.decode(SMSMessage.self, from: Data(plain)) else {
                return ClaimedMessage(id: id, attempts: Int(attempts), message: nil, unreadable: "the payload is not a message")
            }
            return ClaimedMessage(
                id: id, attempts: Int(attempts), message: message, trace: TraceContext(traceparent: traceparent, tracestate: tracestate))
        }
        return nil
    }

    package func deliver(_ message: SMSMessage) async throws { try await transport.send(message) }

    package func markSent(id: Int64, now: Date, on connection: DatabaseConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE sms_outbox SET status = 'sent', sent_at = \(now), attempts = attempts + 1, payload_sealed = NULL WHERE id = \(id)",
            logger: logger)
    }

    package func recordFailure(id: Int64, reason: String, due: Date?, on connection: DatabaseConnection, logger: Logger) async throws {
        if let due {
            try await connection.query(
                "UPDATE sms_outbox SET attempts = attempts + 1, last_error = \(reason), next_attempt_at = \(due) WHERE id = \(id)",
                logger: logger)
        } else {
            try await connection.query(
                """
                UPDATE sms_outbox SET status = 'failed', attempts = attempts + 1, last_error = \(reason), payload_sealed = NULL
                WHERE id = \(id)
                """,
                logger: logger)
        }
    }

    package func mayRetry(_ message: SMSMessage, at date: Date) -> Bool { date < message.expiresAt }

    package func summary(of error: any Error, message: SMSMessage) -> String {
        Self.summary(of: error, hiding: [message.code, message.text])
    }

    package func kind(of message: SMSMessage) -> String { message.purpose }
}
