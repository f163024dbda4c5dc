package import AccountCore
package import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Tracing

/// Hands each message to an operator's endpoint: a JSON `POST` of
/// `{"kind","to","subject","text","html","link"}`, signed (``SignedWebhook``).
package struct WebhookTransport: MailTransport {
    private let poster: SignedWebhook

    /// Why a delivery failed (the response body is not kept: it is the receiver's business).
    package typealias Failure = SignedWebhook.Failure

    /// Creates the transport. `httpClient` defaults to the shared client.
    package init(
        url: String, secret: String, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(10),
        clock: any WallClock = SystemClock()
    ) {
        poster = SignedWebhook(url: url, secret: secret, httpClient: httpClient, timeout: timeout, clock: clock)
    }

    /// POSTs `message`; throws unless the endpoint answers 2xx within the timeout.
    package func send(_ message: EmailMessage) async throws {
        try await poster.post(try Self.body(of: message))
    }

    /// The JSON body: `{"kind","to","subject","text","html","link"}`.
    package static func body(of message: EmailMessage) throws -> [UInt8] {
        let payload = Payload(
            kind: message.kind.rawValue, to: message.to, subject: message.subject, text: message.textBody, html: message.htmlBody,
            link: message.link)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(payload))
    }

    /// ``SignedWebhook/signature(secret:timestamp:body:)``.
    package static func signature(secret: String, timestamp: String, body: [UInt8]) -> String {
        SignedWebhook.signature(secret: secret, timestamp: timestamp, body: body)
    }

    private struct Payload: Encodable {
        var kind: String
        var to: String
        var subject: String
        var text: String
        var html: String
        var link: String
    }
}

extension SignedWebhook.Failure: DeliveryFailure {
    /// The receiver refused this message itself (400 Bad Request, 413 Content Too Large, 422
    /// Unprocessable Content): the same body would be refused again. Everything else stays
    /// retryable: 5xx, 408 and 429 are the receiver's state, and 401, 403 and 404 are about the
    /// endpoint's address or secret, which the operator can fix while the queue waits.
    package var isPermanent: Bool { [400, 413, 422].contains(status) }
}

/// A JSON `POST` to an operator's endpoint signed with a shared secret: the receiver checks
/// `X-Accountd-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>` and rejects stale
/// `X-Accountd-Timestamp`s (unix seconds). Any status outside 2xx throws. The outboxes retry it,
/// except 400, 413 and 422: the receiver refused this message as it is, so it fails at once. The
/// mail and SMS webhooks share it.
package struct SignedWebhook: Sendable {
    private let url: String
    private let secret: String
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let clock: any WallClock

    /// Why a delivery failed (the response body is not kept: it is the receiver's business).
    package struct Failure: Error, CustomStringConvertible {
        /// The HTTP status the endpoint answered.
        package var status: Int
        /// The failure for logs and `last_error`.
        package var description: String { "webhook answered HTTP \(status)" }
    }

    package init(url: String, secret: String, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(10), clock: any WallClock) {
        self.url = url
        self.secret = secret
        self.httpClient = httpClient
        self.timeout = timeout
        self.clock = clock
    }

    /// POSTs `body`, with `messageID` as `X-Accountd-Message-Id` when given; throws unless the
    /// endpoint answers 2xx within the timeout.
    package func post(_ body: [UInt8], messageID: String? = nil) async throws {
        let timestamp = String(Int64(clock.now().timeIntervalSince1970.rounded(.down)))
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "accountd")
        request.headers.add(name: "X-Accountd-Timestamp", value: timestamp)
        request.headers.add(name: "X-Accountd-Signature", value: Self.signature(secret: secret, timestamp: timestamp, body: body))
        if let messageID { request.headers.add(name: "X-Accountd-Message-Id", value: messageID) }
        for (name, value) in TraceContext.outgoingHeaders() { request.headers.replaceOrAdd(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await withSpan("webhook POST", ofKind: .client) { [request] _ in
            try await httpClient.execute(request, timeout: TimeAmount(timeout))
        }
        // Read (and drop) a bounded body so the connection can be reused.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(Int(response.status.code)) else { throw Failure(status: Int(response.status.code)) }
    }

    /// `v1=` and the hex HMAC-SHA256 of `timestamp + "." + body`, keyed with the UTF-8 of `secret`.
    package static func signature(secret: String, timestamp: String, body: [UInt8]) -> String {
        var signed = Array(timestamp.utf8)
        signed.append(UInt8(ascii: "."))
        signed += body
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8)))
        return "v1=" + Hex.encode(mac)
    }
}
