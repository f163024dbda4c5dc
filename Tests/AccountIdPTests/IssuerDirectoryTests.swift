import AccountCore
import AccountTesting
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing
import _CryptoExtras

@testable import AccountIdP

/// The issuer directory's rules (federation-and-limits.md §B.4) against a real JWKS served on
/// loopback: caching per Cache-Control, forced refetches, one fetch in flight, failures remembered.
@Suite("Issuer directory")
struct IssuerDirectoryTests {
    /// One RSA-2048 key for the suite (issuers' keys are at least 2048 bits; generating one per test costs more than the test).
    static let rsaKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// A JWKS endpoint that counts its requests and answers as the test says.
    final class KeyServer: Sendable {
        let key = IssuerDirectoryTests.rsaKey
        let state = Mutex((requests: 0, status: 200, maxAge: "max-age=60", kid: "k1", delay: Duration.zero))

        var requests: Int { state.withLock { $0.requests } }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.get("/jwks") { _, _ -> Response in
                let (status, maxAge, kid, delay) = self.state.withLock { state in
                    state.requests += 1
                    return (state.status, state.maxAge, state.kid, state.delay)
                }
                if delay > .zero { try await Task.sleep(for: delay) }
                guard status == 200 else { return Response(status: .init(code: status)) }
                let primitives = try self.key.publicKey.getKeyPrimitives()
                let body: [String: Any] = [
                    "keys": [
                        [
                            "kty": "RSA", "kid": kid, "use": "sig", "n": TestBase64URL.encode(Array(primitives.modulus)),
                            "e": TestBase64URL.encode(Array(primitives.publicExponent)),
                        ]
                    ]
                ]
                let data = try JSONSerialization.data(withJSONObject: body)
                return Response(
                    status: .ok, headers: [.contentType: "application/json", .cacheControl: maxAge],
                    body: .init(byteBuffer: ByteBuffer(bytes: data)))
            }
            return router
        }

        /// A token signed by the server's key, naming `kid`.
        func token(kid: String) throws -> JWS {
            let header = #"{"alg":"RS256","kid":"\#(kid)"}"#
            let input = TestBase64URL.encode(Array(header.utf8)) + "." + TestBase64URL.encode(Array(#"{"sub":"s"}"#.utf8))
            let signature = try key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5)
            return try IdPTokenRules.parse(input + "." + TestBase64URL.encode(Array(signature.rawRepresentation)))
        }
    }

    static func withDirectory(
        _ body: @escaping @Sendable (IssuerDirectory, KeyServer, ManualClock, IdPConfig) async throws -> Void
    ) async throws {
        let server = KeyServer()
        let app = Application(router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let clock = ManualClock()
            let http = IssuerDirectory.makeClient()
            let directory = IssuerDirectory(
                client: http, clock: clock, allowLoopbackHTTP: true, fetchTimeout: .seconds(60), logger: Logger(label: "idp-tests"))
            var options = IdPOptions()
            options.jwksURI = "http://127.0.0.1:\(client.port!)/jwks"
            let config = IdPConfig(
                providerID: "oidc.test", enabled: true, clientID: "c", issuer: "http://127.0.0.1", options: options,
                createdAt: clock.now(), updatedAt: clock.now())
            do {
                try await body(directory, server, clock, config)
            } catch {
                try await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    @Test("keys are kept as long as Cache-Control says, clamped to 5 minutes and 24 hours")
    func caching() async throws {
        try await Self.withDirectory { directory, server, clock, config in
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 1)
            clock.advance(299)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 1, "max-age=60 is held for the minimum of 5 minutes")
            server.state.withLock { $0.maxAge = "public, max-age=864000" }
            clock.advance(2)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 2)
            clock.advance(86_399)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 2, "ten days is held for 24 hours")
            clock.advance(2)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 3)
        }
    }

    @Test("concurrent first uses share one fetch; made-up kids force one refetch a minute however many ask")
    func oneFetch() async throws {
        try await Self.withDirectory { directory, server, clock, config in
            server.state.withLock { $0.delay = .milliseconds(200) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await directory.verifySignature(try server.token(kid: "k1"), config: config) } }
                try await group.waitForAll()
            }
            #expect(server.requests == 1)
            let refusals = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        do {
                            try await directory.verifySignature(try server.token(kid: "made-up-\(index)"), config: config)
                            return false
                        } catch let error as AccountError { return error.code == .invalidIDPResponse }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(refusals == Array(repeating: true, count: 8))
            #expect(server.requests == 2, "one forced refetch for eight made-up kids")
            clock.advance(61)
            _ = try? await directory.verifySignature(try server.token(kid: "made-up-9"), config: config)
            #expect(server.requests == 3, "a minute later, one more")
        }
    }

    @Test("a failed fetch with nothing cached is the answer for 15 s; after a failed refresh stale keys serve a day")
    func failures() async throws {
        try await Self.withDirectory { directory, server, clock, config in
            server.state.withLock { $0.status = 503 }
            for _ in 0..<5 {
                await #expect(throws: AccountError.self) {
                    try await directory.verifySignature(try server.token(kid: "k1"), config: config)
                }
            }
            #expect(server.requests == 1, "remembered, not refetched")
            server.state.withLock { $0.status = 200 }
            clock.advance(16)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            #expect(server.requests == 2)
            // Expired and failing to refresh: the stale keys still verify, for a day past their expiry.
            server.state.withLock { $0.status = 500 }
            clock.advance(301)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            clock.advance(86_000)
            try await directory.verifySignature(try server.token(kid: "k1"), config: config)
            clock.advance(1_000)
            await #expect(throws: AccountError.self) { try await directory.verifySignature(try server.token(kid: "k1"), config: config) }
        }
    }

    @Test("JWKs: RSA and P-256/P-384 keys are read; other types and malformed ones are skipped")
    func keys() throws {
        let rsa = try Self.rsaKey.publicKey.getKeyPrimitives()
        let rsaJWK: [String: JSONValue] = [
            "kty": .string("RSA"), "n": .string(TestBase64URL.encode(Array(rsa.modulus))),
            "e": .string(TestBase64URL.encode(Array(rsa.publicExponent))),
        ]
        #expect(IssuerKey(jwk: rsaJWK) != nil)
        let point = P256.Signing.PrivateKey().publicKey.rawRepresentation
        let ec: [String: JSONValue] = [
            "kty": .string("EC"), "crv": .string("P-256"), "x": .string(TestBase64URL.encode(Array(point.prefix(32)))),
            "y": .string(TestBase64URL.encode(Array(point.suffix(32)))),
        ]
        #expect(IssuerKey(jwk: ec) != nil)
        var otherCurve = ec
        otherCurve["crv"] = .string("P-521")
        #expect(IssuerKey(jwk: otherCurve) == nil)
        #expect(IssuerKey(jwk: ["kty": .string("oct"), "k": .string("AAAA")]) == nil)
        #expect(IssuerKey(jwk: ["kty": .string("RSA"), "n": .string("!!")]) == nil)
        #expect(IssuerDirectory.maxAge("public, max-age=120, must-revalidate") == 120)
        #expect(IssuerDirectory.maxAge("no-store") == nil && IssuerDirectory.maxAge(nil) == nil)
    }
}
