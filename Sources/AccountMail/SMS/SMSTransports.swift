package import AccountCore
package import AsyncHTTPClient
import Foundation
package import Logging

/// The SMS webhook (mfa-phone-tenants.md §A.7): a JSON `POST` of
/// `{"kind":"sms_verification","messageId","to","code","text","locale","purpose","expiresAt",
/// "tenantId"?,"appSignatureHash"?}`, signed as the mail webhook is (``SignedWebhook``), with the
/// message id as `X-Accountd-Message-Id` so a receiver can drop a redelivery.
package struct WebhookSMSTransport: SMSTransport {
    private let poster: SignedWebhook

    package init(
        url: String, secret: String, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(10),
        clock: any WallClock = SystemClock()
    ) {
        poster = SignedWebhook(url: url, secret: secret, httpClient: httpClient, timeout: timeout, clock: clock)
    }

    package func send(_ message: SMSMessage) async throws {
        try await poster.post(try Self.body(of: message), messageID: message.messageID)
    }

    /// The JSON body.
    package static func body(of message: SMSMessage) throws -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let payload = Payload(
            messageId: message.messageID, to: message.to, code: message.code, text: message.text, locale: message.locale,
            purpose: message.purpose, expiresAt: formatter.string(from: message.expiresAt), tenantId: message.tenantID,
            appSignatureHash: message.appSignatureHash)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(payload))
    }

    private struct Payload: Encodable {
        var kind = "sms_verification"
        var messageId: String
        var to: String
        var code: String
        var text: String
        var locale: String
        var purpose: String
        var expiresAt: String
        var tenantId: String?
        var appSignatureHash: String?
    }
}

/// The development SMS transport: sends nothing and logs one line with the code
/// (`sms to=<obfuscated> code=<code> purpose=<p>`, §A.7). For `demo-` projects; a real project
/// that chooses it is warned at start.
package struct LogSMSTransport: SMSTransport {
    private let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    package func send(_ message: SMSMessage) async throws {
        logger.notice(
            "sms not sent (log transport)",
            metadata: [
                "to": "\(PhoneNumber.obfuscated(message.to))", "code": "\(message.code)", "purpose": "\(message.purpose)",
                "tenant": "\(message.tenantID ?? "")",
            ])
    }
}
