import AccountCore
import AccountCrypto
import AccountTesting
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import HummingbirdTesting
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
import X509
import _CryptoExtras

/// A real OpenID Connect issuer on loopback for the tests (federation-and-limits.md §A): its
/// discovery document, its JWKS (an RSA and a P-256 key, rotatable), and ID tokens it signs. Not a
/// mock inside the server: accountd fetches its keys over HTTP as it would Google's.
final class TestIssuer: Sendable {
    let port: Int
    private let shared: Shared
    var rsa: _RSA.Signing.PrivateKey { shared.rsa }
    var ec: P256.Signing.PrivateKey { shared.ec }

    /// The certificate the issuer serves (self-signed CA for 127.0.0.1), PEM, when it serves HTTPS.
    let certificatePEM: String?

    var url: String { "\(certificatePEM == nil ? "http" : "https")://127.0.0.1:\(port)" }
    var jwksURL: String { url + "/jwks" }
    var fetches: Int { shared.state.withLock { $0.fetches } }
    /// How many times the discovery document was asked for.
    var discoveryFetches: Int { shared.discovery.withLock { $0.fetches } }
    /// Makes the discovery document answer `status` (0: normally).
    func forceDiscoveryStatus(_ status: Int) { shared.discovery.withLock { $0.status = status } }
    var rsaKeyID: String { shared.state.withLock { $0.rsaKeyID } }
    /// The `traceparent` of each discovery and key request ("" when it had none).
    var traceparents: [String] { shared.traceparents.withLock { $0 } }

    private init(port: Int, shared: Shared, certificatePEM: String?) {
        self.port = port
        self.shared = shared
        self.certificatePEM = certificatePEM
    }

    /// What the routes and the tests share.
    final class Shared: Sendable {
        let rsa: _RSA.Signing.PrivateKey
        let ec = P256.Signing.PrivateKey()
        let state = Mutex((rsaKeyID: "rsa-1", fetches: 0, maxAge: 3600))
        /// Discovery requests seen, and a status to answer them with instead (0: the document).
        let discovery = Mutex((fetches: 0, status: 0))
        /// The port, once listening (the discovery document names it).
        let port = Mutex(0)
        /// Codes the token endpoint will exchange: code → (ID token, PKCE challenge); and an
        /// answer status to force (400, 500), 0 for normal.
        let codes = Mutex([String: (idToken: String, challenge: String?)]())
        let tokenStatus = Mutex(0)
        /// The last form the token endpoint received.
        let lastTokenForm = Mutex([String: String]())
        /// The `traceparent` of each discovery and key request.
        let traceparents = Mutex([String]())

        /// State around `rsa`, a key generated off the cooperative pool (``TestIssuer/rsaKey()``).
        init(rsa: _RSA.Signing.PrivateKey) { self.rsa = rsa }
    }

    /// A new RSA-2048 key, generated as the server generates its own (``RS256KeyRing``), on a
    /// thread of its own: on Swift's cooperative pool the suite's many issuers and servers, starting
    /// at once, stalled every other test's tasks.
    static func rsaKey() async throws -> _RSA.Signing.PrivateKey {
        try await RS256KeyRing.generateOffPool()
    }

    /// Starts an issuer for `body`; with `tls`, over HTTPS with a certificate of its own for
    /// 127.0.0.1 (which the test trusts through `ACCOUNTD_IDP_CA_FILE`).
    static func with<T: Sendable>(tls: Bool = false, _ body: @Sendable (TestIssuer) async throws -> T) async throws -> T {
        let shared = Shared(rsa: try await rsaKey())
        let scheme = tls ? "https" : "http"
        let router = Router()
        router.get("/.well-known/openid-configuration") { request, _ -> Response in
            shared.traceparents.withLock { $0.append(request.headers[.init("traceparent")!] ?? "") }
            let forced = shared.discovery.withLock { discovery in
                discovery.fetches += 1
                return discovery.status
            }
            if forced != 0 { return Response(status: .init(code: forced)) }
            let base = "\(scheme)://127.0.0.1:\(shared.port.withLock { $0 })"
            return Self.json([
                "issuer": base, "jwks_uri": base + "/jwks", "authorization_endpoint": base + "/authorize",
                "token_endpoint": base + "/token",
            ])
        }
        router.get("/jwks") { request, _ -> Response in
            shared.traceparents.withLock { $0.append(request.headers[.init("traceparent")!] ?? "") }
            let (kid, maxAge) = shared.state.withLock { state in
                state.fetches += 1
                return (state.rsaKeyID, state.maxAge)
            }
            let primitives = try shared.rsa.publicKey.getKeyPrimitives()
            let point = shared.ec.publicKey.rawRepresentation
            var response = Self.json([
                "keys": [
                    [
                        "kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": TestBase64URL.encode(Array(primitives.modulus)),
                        "e": TestBase64URL.encode(Array(primitives.publicExponent)),
                    ],
                    [
                        "kty": "EC", "crv": "P-256", "kid": "ec-1", "x": TestBase64URL.encode(Array(point.prefix(32))),
                        "y": TestBase64URL.encode(Array(point.suffix(32))),
                    ],
                ]
            ])
            response.headers[.cacheControl] = "public, max-age=\(maxAge)"
            return response
        }
        // Google's x509 metadata format: {kid: PEM certificate of the RSA key}.
        router.get("/x509") { _, _ -> Response in
            let kid = shared.state.withLock { state in
                state.fetches += 1
                return state.rsaKeyID
            }
            let signer = Certificate.PrivateKey(shared.rsa)
            let name = try DistinguishedName { CommonName("accountd test signer") }
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: signer.publicKey, notValidBefore: Date(timeIntervalSince1970: 0),
                notValidAfter: Date(timeIntervalSince1970: 4_102_444_800), issuer: name, subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(), issuerPrivateKey: signer)
            return Self.json([kid: try certificate.serializeAsPEM().pemString])
        }
        router.post("/token") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            var form: [String: String] = [:]
            for pair in String(buffer: body).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            shared.lastTokenForm.withLock { $0 = form }
            let forced = shared.tokenStatus.withLock { $0 }
            if forced != 0 { return Response(status: .init(code: forced)) }
            guard let code = form["code"], let issued = shared.codes.withLock({ $0.removeValue(forKey: code) }) else {
                return Response(status: .badRequest)
            }
            if let challenge = issued.challenge {
                // PKCE (RFC 7636, S256): the verifier must hash to the challenge sent to /authorize.
                let verifier = form["code_verifier"] ?? ""
                guard TestBase64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8)))) == challenge else {
                    return Response(status: .badRequest)
                }
            }
            return Self.json([
                "id_token": issued.idToken, "access_token": "idp-access-token", "refresh_token": "idp-refresh-token", "expires_in": 3599,
                "token_type": "Bearer",
            ])
        }
        guard tls else {
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            return try await app.test(.live) { client in
                shared.port.withLock { $0 = client.port! }
                return try await body(TestIssuer(port: client.port!, shared: shared, certificatePEM: nil))
            }
        }
        let (certificate, key) = try selfSignedCertificate()
        let server = try TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        let port = Mutex(0)
        let app = Application(
            router: router, server: try .tls(.http1(), tlsConfiguration: server),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port ?? 0 } })
        // The test client of `.live` speaks plain HTTP: run the app as a task and wait for its port.
        let running = Task { try await app.run() }
        defer { running.cancel() }
        var bound = 0
        while bound == 0 {
            try await Task.sleep(for: .milliseconds(20))
            bound = port.withLock { $0 }
        }
        shared.port.withLock { $0 = bound }
        return try await body(TestIssuer(port: bound, shared: shared, certificatePEM: certificate))
    }

    /// A self-signed CA certificate for 127.0.0.1 and its key, PEM.
    static func selfSignedCertificate() throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let signer = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName("accountd test issuer") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: signer.publicKey, notValidBefore: now - 3600, notValidAfter: now + 86400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            }, issuerPrivateKey: signer)
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    static func json(_ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Lets the token endpoint exchange `code` for `idToken` once, for the PKCE `challenge`.
    func issue(code: String, idToken: String, challenge: String?) {
        shared.codes.withLock { $0[code] = (idToken, challenge) }
    }

    /// Makes the token endpoint answer `status` (0: normally).
    func forceTokenStatus(_ status: Int) { shared.tokenStatus.withLock { $0 = status } }

    /// The form of the last token request.
    var lastTokenForm: [String: String] { shared.lastTokenForm.withLock { $0 } }

    /// Serves a new RSA key id from now on (the same key material: what matters is the `kid`).
    func rotate(to kid: String) { shared.state.withLock { $0.rsaKeyID = kid } }

    /// An ID token: RS256 (or ES256) over `claims` on top of sensible defaults for `audience`.
    func token(
        sub: String = "sub-1", audience: Any = "client-1", issuer: String? = nil, email: String? = nil, emailVerified: Bool? = nil,
        issuedAt: Date, extra: [String: Any] = [:], algorithm: String = "RS256", keyID: String? = nil
    ) throws -> String {
        var claims: [String: Any] = [
            "iss": issuer ?? url, "sub": sub, "aud": audience, "iat": Int(issuedAt.timeIntervalSince1970),
            "exp": Int(issuedAt.timeIntervalSince1970) + 3600,
        ]
        if let email { claims["email"] = email }
        if let emailVerified { claims["email_verified"] = emailVerified }
        claims.merge(extra) { $1 }
        let kid = keyID ?? (algorithm == "ES256" ? "ec-1" : rsaKeyID)
        let header: [String: Any] = ["alg": algorithm, "typ": "JWT", "kid": kid]
        func segment(_ object: [String: Any]) throws -> String {
            TestBase64URL.encode(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        let input = try segment(header) + "." + segment(claims)
        let signature: [UInt8]
        switch algorithm {
        case "ES256": signature = Array(try ec.signature(for: SHA256.hash(data: Array(input.utf8))).rawRepresentation)
        case "PS256": signature = Array(try rsa.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .PSS).rawRepresentation)
        default:
            signature = Array(try rsa.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
        }
        return input + "." + TestBase64URL.encode(signature)
    }
}
