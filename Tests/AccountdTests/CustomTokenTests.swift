import AccountCore
import AccountTesting
import Crypto
import Foundation
import NIOHTTP1
import SwiftASN1
import Testing
import X509
import _CryptoExtras

@testable import accountd

/// A service account as a backend holds it: an RSA key that mints custom tokens the way the Admin
/// SDK does (federation-and-limits.md §C.1).
struct ServiceAccount: Sendable {
    let email: String
    let keyID: String
    let key: _RSA.Signing.PrivateKey

    init(_ name: String = "backend") throws {
        email = "\(name)@acme-gcp.iam.gserviceaccount.com"
        keyID = "key-\(name)"
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// A service account whose key someone else holds and publishes (Google, under IAM signBlob).
    init(email: String, keyID: String, key: _RSA.Signing.PrivateKey) {
        self.email = email
        self.keyID = keyID
        self.key = key
    }

    var publicKeyPEM: String { key.publicKey.pemRepresentation }

    /// A custom token; `alter` edits the header and payload before signing.
    func token(
        uid: String?, claims: [String: any Sendable]? = nil, issuedAt: Date, lifetime: TimeInterval = 3600,
        alter: (inout [String: any Sendable], inout [String: any Sendable]) -> Void = { _, _ in }
    ) throws -> String {
        var header: [String: any Sendable] = ["alg": "RS256", "typ": "JWT", "kid": keyID]
        var payload: [String: any Sendable] = [
            "iss": email, "sub": email, "aud": CustomTokenRules.audience, "iat": Int(issuedAt.timeIntervalSince1970),
            "exp": Int(issuedAt.timeIntervalSince1970 + lifetime),
        ]
        if let uid { payload["uid"] = uid }
        if let claims { payload["claims"] = claims }
        alter(&header, &payload)
        let input = try Self.segment(header) + "." + Self.segment(payload)
        let signature = try key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + TestBase64URL.encode(Array(signature.rawRepresentation))
    }

    /// The Admin SDK's emulator-mode token: `alg: none`, empty signature.
    static func unsigned(uid: String, issuedAt: Date) throws -> String {
        let payload: [String: any Sendable] = [
            "iss": "firebase-auth-emulator@example.com", "sub": "firebase-auth-emulator@example.com", "aud": CustomTokenRules.audience,
            "iat": Int(issuedAt.timeIntervalSince1970), "exp": Int(issuedAt.timeIntervalSince1970 + 3600), "uid": uid,
        ]
        return try segment(["alg": "none", "typ": "JWT"]) + "." + segment(payload) + "."
    }

    static func segment(_ object: [String: any Sendable]) throws -> String {
        TestBase64URL.encode(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
    }
}

@Suite("Custom tokens (federation-and-limits.md §C)")
struct CustomTokenTests {
    static func register(_ api: API, _ account: ServiceAccount, keyID: Bool = false) async throws -> TestHTTPClient.Reply {
        var body: [String: any Sendable] = ["serviceAccountEmail": account.email, "publicKeyPem": account.publicKeyPEM]
        if keyID { body["keyId"] = account.keyID }
        return try await api.http.admin.post("/v1/projects/\(api.project)/customTokenSigners", body, headers: [API.admin])
    }

    static func exchange(_ api: API, _ token: String) async throws -> TestHTTPClient.Reply {
        try await api.client("signInWithCustomToken", ["token": token, "returnSecureToken": true])
    }

    @Test("C1, C2: the Admin SDK's token signs in once with its claims on every ID token of the session; a fresh token signs in again")
    func signInOnceWithClaims() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            let registered = try await Self.register(api, account)
            #expect(registered.status == 200, "\(String(decoding: registered.body, as: UTF8.self))")
            #expect(registered.string("serviceAccountEmail") == account.email && registered.string("source") == "publicKeyPem")
            #expect(registered.string("fingerprint")?.count == 64)
            let token = try account.token(uid: "u1", claims: ["premium": true, "tier": "gold"], issuedAt: clock.now())
            let first = try await Self.exchange(api, token)
            #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
            #expect(first.json["isNewUser"] as? Bool == true && first.string("kind") == "identitytoolkit#VerifyCustomTokenResponse")
            let session = Session(first)
            #expect(session.claims["sub"] as? String == "u1" && session.claims["premium"] as? Bool == true)
            #expect((session.claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String == "custom")
            #expect(session.claims["provider_id"] == nil)
            // The server verifies its own token, and the overlay outlives a refresh.
            #expect(try await api.admin("verifyIdToken", ["idToken": session.idToken, "checkRevoked": true]).status == 200)
            clock.advance(5)
            let refreshed = Session(try await api.refresh(session.refreshToken))
            #expect(refreshed.claims["premium"] as? Bool == true && refreshed.claims["tier"] as? String == "gold")
            let user = (try await api.admin("lookup", ["localId": ["u1"]]).json["users"] as? [[String: Any]])?.first
            #expect(user?["customAuth"] as? Bool == true)

            let replayed = try await Self.exchange(api, token)
            #expect(replayed.errorMessage == "INVALID_CUSTOM_TOKEN : Custom token has already been used.")
            // Another spelling of the same signature is the same token.
            for variant in [token + "=", token + "=="] {
                #expect(try await Self.exchange(api, variant).errorCode == "INVALID_CUSTOM_TOKEN", "\(variant.suffix(4))")
            }
            let fresh = try await Self.exchange(api, try account.token(uid: "u1", issuedAt: clock.now()))
            #expect(fresh.status == 200 && fresh.json["isNewUser"] as? Bool == false)
            #expect(Session(fresh).claims["premium"] == nil, "claims belong to the session of the token that carried them")
        }
    }

    @Test("C3, C6: malformed, unsigned, expired, wrongly signed and mis-addressed tokens, reserved claims and no uid")
    func refusals() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        let stranger = try ServiceAccount("stranger")
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            #expect(try await Self.register(api, account).status == 200)
            let now = clock.now()
            func message(_ token: String) async throws -> String? { try await Self.exchange(api, token).errorMessage }
            #expect(try await api.client("signInWithCustomToken", [:]).errorMessage == "MISSING_CUSTOM_TOKEN")
            #expect(try await message("a.b") == "INVALID_CUSTOM_TOKEN : Invalid assertion format. 3 dot separated segments required.")
            let valid = try account.token(uid: "u2", issuedAt: now)
            let parts = valid.split(separator: ".")
            #expect(try await message("\(parts[0]).\(parts[1]).") == "INVALID_CUSTOM_TOKEN : Missing signature.")
            #expect(try await message("%%%.\(parts[1]).\(parts[2])") == "INVALID_CUSTOM_TOKEN")
            let idTokenAudience = try account.token(uid: "u2", issuedAt: now) { _, payload in payload["aud"] = "demo-test" }
            #expect(try await message(idTokenAudience)?.hasPrefix("INVALID_CUSTOM_TOKEN : Invalid aud (audience): demo-test.") == true)
            let hs256 = try account.token(uid: "u2", issuedAt: now) { header, _ in header["alg"] = "HS256" }
            #expect(try await message(hs256) == "INVALID_CUSTOM_TOKEN")
            #expect(try await message(try stranger.token(uid: "u2", issuedAt: now)) == "INVALID_CUSTOM_TOKEN", "an unregistered signer")
            let forged = try stranger.token(uid: "u2", issuedAt: now) { _, payload in
                payload["iss"] = account.email
                payload["sub"] = account.email
            }
            #expect(try await message(forged) == "INVALID_CUSTOM_TOKEN", "a registered name, another key")
            let subMismatch = try account.token(uid: "u2", issuedAt: now) { _, payload in payload["sub"] = "someone@else" }
            #expect(try await message(subMismatch) == "INVALID_CUSTOM_TOKEN")
            let expired = try account.token(uid: "u2", issuedAt: now - 7200)
            #expect(try await message(expired) == "INVALID_CUSTOM_TOKEN : Token expired, or issued too far in the future.")
            let future = try account.token(uid: "u2", issuedAt: now + 600)
            #expect(try await message(future) == "INVALID_CUSTOM_TOKEN : Token expired, or issued too far in the future.")
            let longLived = try account.token(uid: "u2", issuedAt: now, lifetime: 7200)
            #expect(try await message(longLived) == "INVALID_CUSTOM_TOKEN : Token expired, or issued too far in the future.")
            #expect(
                try await message(try account.token(uid: "u2", issuedAt: now) { _, payload in payload["tenant_id"] = "t1" })
                    == "TENANT_ID_MISMATCH")
            #expect(try await message(try account.token(uid: nil, issuedAt: now)) == "MISSING_IDENTIFIER")
            #expect(
                try await message(try account.token(uid: String(repeating: "x", count: 129), issuedAt: now))
                    == "INVALID_CUSTOM_TOKEN : uid must be 1-128 printable ASCII characters.")
            #expect(try await message(try account.token(uid: "u2", claims: ["firebase": 1], issuedAt: now)) == "FORBIDDEN_CLAIM : firebase")
            #expect(
                try await message(try account.token(uid: "u2", issuedAt: now) { _, payload in payload["claims"] = "text" })
                    == "INVALID_CLAIMS")
            #expect(
                try await message(try account.token(uid: "u2", claims: ["big": String(repeating: "x", count: 1000)], issuedAt: now))
                    == "CLAIMS_TOO_LARGE")
            // None of that created anyone; the valid token still works.
            #expect(try await api.admin("lookup", ["localId": ["u2"]]).json["users"] == nil)
            #expect(try await Self.exchange(api, valid).status == 200)
        }
    }

    @Test("C4: a key registered only for another project on this database is CREDENTIAL_MISMATCH; with a kid, only that key is tried")
    func otherProject() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        let theirs = try ServiceAccount("theirs")
        let ours = try ServiceAccount("ours")
        var other = testConfiguration()
        other.projectID = "demo-other"
        try await withServer(other, database: database, clock: clock) { http in
            let registered = try await Self.register(API(http: http, project: "demo-other"), theirs)
            #expect(registered.status == 200)
        }
        try await withServer(database: database, clock: clock) { http in
            let api = API(http: http)
            let mismatch = try await Self.exchange(api, try theirs.token(uid: "u3", issuedAt: clock.now()))
            #expect(mismatch.errorCode == "CREDENTIAL_MISMATCH")
            // Registered with its kid: a token naming another kid is not verified by it.
            #expect(try await Self.register(api, ours, keyID: true).status == 200)
            let wrongKid = try ours.token(uid: "u3", issuedAt: clock.now()) { header, _ in header["kid"] = "rotated-away" }
            #expect(try await Self.exchange(api, wrongKid).errorCode == "INVALID_CUSTOM_TOKEN")
            #expect(try await Self.exchange(api, try ours.token(uid: "u3", issuedAt: clock.now())).status == 200)
        }
    }

    @Test("C5, C8: unsigned emulator-mode tokens only behind the demo switch, reusable there; a real project refuses to start with it")
    func unsignedTokens() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        let token = try ServiceAccount.unsigned(uid: "dev-user", issuedAt: clock.now())
        try await withServer(database: database, clock: clock) { http in
            let refused = try await Self.exchange(API(http: http), token)
            #expect(refused.errorMessage == "INVALID_CUSTOM_TOKEN")
        }
        var demo = testConfiguration()
        demo.federation.acceptUnsignedCustomTokens = true
        try await withServer(demo, database: database, clock: clock) { http in
            let api = API(http: http)
            let first = try await Self.exchange(api, token)
            #expect(first.status == 200 && first.json["isNewUser"] as? Bool == true)
            #expect(try await Self.exchange(api, token).json["isNewUser"] as? Bool == false, "tests reuse unsigned tokens")
        }
        // The built binary, as an operator would start it.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("c8-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errors) }
        let process = try ChildProcess(
            RunningServer.binary.path, ["serve", "--port", "0", "--admin-port", "0"],
            environment: [
                "PATH": "/usr/bin:/bin", "ACCOUNTD_PROJECT_ID": "acme-prod", "ACCOUNTD_API_KEYS": "k",
                "ACCOUNTD_ADMIN_TOKENS": "ops:secret-token-7Hq2vX9pL4mZ8wR",
                "ACCOUNTD_KEY_ENCRYPTION_KEY": Data(repeating: 9, count: 32).base64EncodedString(), "ACCOUNTD_MAIL_TRANSPORT": "webhook",
                "ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS": "1",
            ], errors: errors.path)
        let status = try await process.exit()
        #expect(status == 78)
        let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        #expect(said.contains("ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS"))
    }

    @Test("C7: a disabled uid is refused and the token is not spent: it signs in once the user is enabled again")
    func disabledUser() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            #expect(try await Self.register(api, account).status == 200)
            #expect(try await api.admin("signUp", ["localId": "u4", "disabled": true]).status == 200)
            let token = try account.token(uid: "u4", issuedAt: clock.now())
            #expect(try await Self.exchange(api, token).errorCode == "USER_DISABLED")
            #expect(try await api.admin("update", ["localId": "u4", "disableUser": false]).status == 200)
            let signedIn = try await Self.exchange(api, token)
            #expect(signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == false)
        }
    }

    @Test("concurrency: two first sign-ins of one new uid both succeed, one creates; one token twice at once signs in once")
    func concurrentSignIns() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            #expect(try await Self.register(api, account).status == 200)
            // Two devices' tokens (the same second and uid would make the same token: one credential).
            let tokens = try (0..<2).map { device in try account.token(uid: "racer", claims: ["device": device], issuedAt: clock.now()) }
            async let a = Self.exchange(api, tokens[0])
            async let b = Self.exchange(api, tokens[1])
            let both = try await [a, b]
            #expect(both.allSatisfy { $0.status == 200 })
            #expect(both.filter { $0.json["isNewUser"] as? Bool == true }.count == 1)

            let once = try account.token(uid: "racer", claims: ["n": 1], issuedAt: clock.now())
            async let c = Self.exchange(api, once)
            async let d = Self.exchange(api, once)
            let pair = try await [c, d]
            #expect(pair.filter { $0.status == 200 }.count == 1)
            #expect(pair.filter { $0.errorMessage == "INVALID_CUSTOM_TOKEN : Custom token has already been used." }.count == 1)
        }
    }

    @Test("signers: PEM, X.509 certificate or JWKS; RSA of 2048 bits or more; duplicates, removal and callers refused as they should be")
    func signers() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http, project: "acme-prod")
            let path = "/v1/projects/acme-prod/customTokenSigners"
            let created = try await Self.register(api, account)
            #expect(created.status == 200)
            #expect(try await Self.register(api, account).errorCode == "CONFIGURATION_EXISTS")
            let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
            let refused = try await http.admin.post(
                path, ["serviceAccountEmail": "x@example.com", "publicKeyPem": small.publicKey.pemRepresentation], headers: [API.admin])
            #expect(refused.errorMessage == "INVALID_CONFIG : RSA keys must have at least 2048 bits; this one has 1024.")
            #expect(
                try await http.admin.post(path, ["serviceAccountEmail": "x@example.com", "publicKeyPem": "nope"], headers: [API.admin])
                    .errorCode == "INVALID_CONFIG")
            #expect(
                try await http.admin.post(path, ["publicKeyPem": account.publicKeyPEM], headers: [API.admin]).errorCode == "INVALID_CONFIG")

            // An X.509 certificate, as Google publishes service-account keys.
            let certified = try ServiceAccount("certified")
            let certificateKey = Certificate.PrivateKey(certified.key)
            let name = try DistinguishedName { CommonName(certified.email) }
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: certificateKey.publicKey, notValidBefore: clock.now() - 60,
                notValidAfter: clock.now() + 86400, issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: Certificate.Extensions(), issuerPrivateKey: certificateKey)
            let byCertificate = try await http.admin.post(
                path,
                [
                    "serviceAccountEmail": certified.email, "x509Certificate": try certificate.serializeAsPEM().pemString,
                    "keyId": certified.keyID,
                ],
                headers: [API.admin])
            #expect(byCertificate.string("source") == "x509Certificate" && byCertificate.string("keyId") == certified.keyID)
            // A JWKS with its kids.
            let rotated = try ServiceAccount("rotated")
            let components = try rotated.key.publicKey.getKeyPrimitives()
            let jwks: [String: any Sendable] = [
                "keys": [
                    [
                        "kty": "RSA", "kid": rotated.keyID, "n": TestBase64URL.encode(Array(components.modulus)),
                        "e": TestBase64URL.encode(Array(components.publicExponent)),
                    ]
                ]
            ]
            let byJWKS = try await http.admin.post(path, ["serviceAccountEmail": rotated.email, "jwks": jwks], headers: [API.admin])
            #expect(byJWKS.string("keyId") == rotated.keyID, "\(String(decoding: byJWKS.body, as: UTF8.self))")
            for (signer, uid) in [(certified, "by-cert"), (rotated, "by-jwks"), (account, "by-pem")] {
                let reply = try await Self.exchange(api, try signer.token(uid: uid, issuedAt: clock.now()))
                #expect(reply.status == 200, "\(uid): \(reply.errorMessage ?? "")")
            }

            let listed = try await http.admin.get(path, headers: [API.admin]).json["signers"] as? [[String: Any]] ?? []
            #expect(listed.count == 3)
            // Who may: admins on the admin listener only.
            #expect(try await http.get(path, headers: [API.admin]).status == 401, "the public listener of a real project")
            #expect(try await http.admin.get("\(path)?key=\(API.key)").status == 401)
            #expect(
                try await api.client("signInWithCustomToken", ["token": try account.token(uid: "u5", issuedAt: clock.now())]).status == 200)

            let id = try #require(created.string("signerId"))
            #expect(try await http.admin.send(.DELETE, "\(path)/\(id)", headers: [API.admin]).status == 200)
            #expect(try await http.admin.send(.DELETE, "\(path)/\(id)", headers: [API.admin]).errorCode == "CONFIGURATION_NOT_FOUND")
            #expect(try await Self.exchange(api, try account.token(uid: "u5", issuedAt: clock.now())).errorCode == "INVALID_CUSTOM_TOKEN")
            let audit = try await api.admin("listAuditEvents", [:]).json["events"] as? [[String: Any]] ?? []
            #expect(audit.contains { $0["action"] as? String == "CUSTOM_TOKEN_SIGNER_REMOVED" })
        }
    }

    @Test("keysUrl: keys published as a JWKS or as x509 metadata are fetched on use, cached, refetched once for a new kid")
    func keysURLSigners() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                let path = "/v1/projects/demo-test/customTokenSigners"
                let managed = "managed@acme-gcp.iam.gserviceaccount.com"
                let registered = try await http.admin.post(
                    path, ["serviceAccountEmail": managed, "keysUrl": issuer.jwksURL], headers: [API.admin])
                #expect(registered.status == 200)
                #expect(registered.string("source") == "keysUrl" && registered.string("keysUrl") == issuer.jwksURL)
                #expect(registered.string("fingerprint") == Hex.encode(Array(SHA256.hash(data: Array(issuer.jwksURL.utf8)))))
                #expect(
                    try await http.admin.post(path, ["serviceAccountEmail": managed, "keysUrl": issuer.jwksURL], headers: [API.admin])
                        .errorCode == "CONFIGURATION_EXISTS")
                let fetchesAfterRegistration = issuer.fetches

                let signer = ServiceAccount(email: managed, keyID: issuer.rsaKeyID, key: issuer.rsa)
                #expect(try await Self.exchange(api, try signer.token(uid: "m1", issuedAt: clock.now())).status == 200)
                #expect(try await Self.exchange(api, try signer.token(uid: "m2", issuedAt: clock.now())).status == 200)
                #expect(issuer.fetches == fetchesAfterRegistration)  // served from the cache
                // Google rotates: a token with the new kid refetches once and signs in.
                issuer.rotate(to: "rsa-2")
                let rotated = ServiceAccount(email: managed, keyID: "rsa-2", key: issuer.rsa)
                #expect(try await Self.exchange(api, try rotated.token(uid: "m3", issuedAt: clock.now())).status == 200)
                #expect(issuer.fetches == fetchesAfterRegistration + 1)
                // A made-up kid within the minute costs no fetch, and no sign-in.
                let madeUp = ServiceAccount(email: managed, keyID: "made-up", key: issuer.rsa)
                #expect(
                    try await Self.exchange(api, try madeUp.token(uid: "m4", issuedAt: clock.now())).errorCode == "INVALID_CUSTOM_TOKEN")
                #expect(issuer.fetches == fetchesAfterRegistration + 1)
                // A minute on, a flood of made-up kids at once costs one refetch, not one a token.
                clock.advance(61)
                let flood = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<8 {
                        let token = try madeUp.token(uid: "f\(index)", issuedAt: clock.now())
                        group.addTask { try await Self.exchange(api, token).errorCode }
                    }
                    return try await group.reduce(into: [String?]()) { $0.append($1) }
                }
                #expect(flood.allSatisfy { $0 == "INVALID_CUSTOM_TOKEN" })
                #expect(issuer.fetches == fetchesAfterRegistration + 2)
                // Another key under the published kid verifies nothing.
                let forger = ServiceAccount(email: managed, keyID: "rsa-2", key: try _RSA.Signing.PrivateKey(keySize: .bits2048))
                #expect(
                    try await Self.exchange(api, try forger.token(uid: "m5", issuedAt: clock.now())).errorCode == "INVALID_CUSTOM_TOKEN")

                // Google's x509 metadata: {kid: certificate}.
                let robot = "robot@acme-gcp.iam.gserviceaccount.com"
                #expect(
                    try await http.admin.post(path, ["serviceAccountEmail": robot, "keysUrl": issuer.url + "/x509"], headers: [API.admin])
                        .status == 200)
                let robotSigner = ServiceAccount(email: robot, keyID: "rsa-2", key: issuer.rsa)
                #expect(try await Self.exchange(api, try robotSigner.token(uid: "r1", issuedAt: clock.now())).status == 200)

                // Refused registrations: unreachable, not a key document, not http(s).
                for (url, reason) in [
                    ("http://127.0.0.1:1/keys", "keysUrl could not be fetched"),
                    (issuer.url + "/.well-known/openid-configuration", "neither a JWKS nor a map of key ids to certificates"),
                    ("ftp://keys.example/x", "keysUrl must be an https URL."),
                ] {
                    let refused = try await http.admin.post(
                        path, ["serviceAccountEmail": "x@example.com", "keysUrl": url], headers: [API.admin])
                    #expect(
                        refused.errorCode == "INVALID_CONFIG" && refused.errorMessage?.contains(reason) == true,
                        "\(url): \(refused.errorMessage ?? "")")
                }
                let listed = try await http.admin.get(path, headers: [API.admin])
                #expect((listed.json["signers"] as? [[String: Any]])?.compactMap { $0["keysUrl"] as? String }.count == 2)
            }
        }
    }

    @Test("§E.5: refused tokens count against the address; past the bucket even a valid token waits")
    func credentialFailuresLimited() async throws {
        let clock = ManualClock()
        let account = try ServiceAccount()
        var configuration = productionConfiguration()
        configuration.abuseLimits = AbuseLimitSettings(enabled: true)
        try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http, project: "acme-prod")
            #expect(try await Self.register(api, account).status == 200)
            for _ in 0..<30 {
                #expect(try await Self.exchange(api, "a.b.c").errorCode == "INVALID_CUSTOM_TOKEN")
            }
            let limited = try await Self.exchange(api, try account.token(uid: "u6", issuedAt: clock.now()))
            #expect(limited.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER" && limited.header("Retry-After") != nil)
            clock.advance(11)
            #expect(try await Self.exchange(api, try account.token(uid: "u6", issuedAt: clock.now())).status == 200)
        }
    }
}
