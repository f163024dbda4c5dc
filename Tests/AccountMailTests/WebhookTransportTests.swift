import AccountCore
import AccountMail
import AccountTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

// A guard against a hang, not a speed check: the whole suite on two cores can take minutes.
@Suite("Webhook transport against a live HTTP server", .timeLimit(.minutes(5)))
struct WebhookTransportTests {
    static let secret = "whsec-0123456789abcdef"

    /// What the endpoint saw.
    struct Delivery: Sendable {
        var timestamp: String?
        var signature: String?
        var contentType: String?
        var body: [UInt8]
    }

    /// The deliveries the endpoint saw, in order.
    final class Deliveries: Sendable {
        private let state = Mutex<[Delivery]>([])
        func append(_ delivery: Delivery) { state.withLock { $0.append(delivery) } }
        var all: [Delivery] { state.withLock { $0 } }
    }

    /// Runs a server with `/hook` (records and answers 204) and `/down` (answers 503).
    static func withServer(_ body: @Sendable (Int, Deliveries) async throws -> Void) async throws {
        let deliveries = Deliveries()
        let router = Router()
        router.post("hook") { request, _ -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let delivery = Delivery(
                timestamp: request.headers[.init("X-Accountd-Timestamp")!], signature: request.headers[.init("X-Accountd-Signature")!],
                contentType: request.headers[.contentType], body: Array(buffer: bytes))
            deliveries.append(delivery)
            return .noContent
        }
        router.post("down") { _, _ -> HTTPResponse.Status in .serviceUnavailable }
        router.post("status/:code") { _, context -> HTTPResponse.Status in
            HTTPResponse.Status(code: try context.parameters.require("code", as: Int.self))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body(try #require(client.port), deliveries)
        }
    }

    @Test("POSTs the message as JSON, signed with HMAC-SHA256 over timestamp.body")
    func signedDelivery() async throws {
        let message = EmailTemplates.message(
            kind: .emailSignIn, to: "ann@example.com", link: "https://auth.example.com/a?mode=signIn&oobCode=x/y", lang: "fr",
            productName: "Acmé")
        try await Self.withServer { port, deliveries in
            let before = Int(Date().timeIntervalSince1970)
            try await WebhookTransport(url: "http://127.0.0.1:\(port)/hook", secret: Self.secret).send(message)
            let delivery = try #require(deliveries.all.first)

            let timestamp = try #require(delivery.timestamp)
            let seconds = try #require(Int(timestamp))
            #expect(seconds >= before - 1 && seconds <= Int(Date().timeIntervalSince1970) + 1)
            var signed = Array(timestamp.utf8)
            signed.append(UInt8(ascii: "."))
            signed += delivery.body
            let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(Self.secret.utf8)))
            let expected = "v1=" + mac.map { String(format: "%02x", $0) }.joined()
            #expect(delivery.signature == expected)
            #expect(delivery.contentType == "application/json")

            let json = try #require(try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: String])
            #expect(
                json == [
                    "kind": "EMAIL_SIGNIN", "to": "ann@example.com", "subject": message.subject, "text": message.textBody,
                    "html": message.htmlBody, "link": message.link,
                ])
        }
    }

    @Test("a non-2xx answer is an error (the outbox retries)")
    func non2xxThrows() async throws {
        let message = EmailTemplates.message(
            kind: .verifyEmail, to: "a@example.com", link: "https://x.example/a", lang: "en", productName: "A")
        try await Self.withServer { port, _ in
            let error = await #expect(throws: WebhookTransport.Failure.self) {
                try await WebhookTransport(url: "http://127.0.0.1:\(port)/down", secret: Self.secret).send(message)
            }
            #expect(error?.status == 503)
            await #expect(throws: WebhookTransport.Failure.self) {
                try await WebhookTransport(url: "http://127.0.0.1:\(port)/missing", secret: Self.secret).send(message)
            }
        }
    }

    @Test("only a refusal of the message itself (400, 413, 422) is permanent; the outbox retries the rest")
    func permanentRefusals() async throws {
        let message = EmailTemplates.message(
            kind: .verifyEmail, to: "a@example.com", link: "https://x.example/a", lang: "en", productName: "A")
        try await Self.withServer { port, _ in
            for (code, permanent) in [
                (400, true), (413, true), (422, true), (401, false), (403, false), (404, false), (408, false), (429, false),
                (500, false), (503, false),
            ] {
                let error = await #expect(throws: WebhookTransport.Failure.self) {
                    try await WebhookTransport(url: "http://127.0.0.1:\(port)/status/\(code)", secret: Self.secret).send(message)
                }
                #expect(error?.status == code)
                #expect((error as (any DeliveryFailure)?)?.isPermanent == permanent, "HTTP \(code)")
            }
        }
    }
}
