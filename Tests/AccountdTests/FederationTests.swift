import AccountCore
import AccountTesting
import Crypto
import Foundation
import NIOHTTP1
import Testing

@testable import accountd

/// `accounts:signInWithIdp` with ID tokens from a real issuer on loopback (federation-and-limits.md
/// §A.15's checklist), over real HTTP and PostgreSQL.
@Suite("Federated sign-in (§A)")
struct FederationTests {
    /// A demo project (loopback HTTP issuers are allowed there) with unsigned custom tokens, so a
    /// test can sign in a user it created by id.
    static func configuration() -> Configuration {
        var configuration = testConfiguration()
        configuration.federation.acceptUnsignedCustomTokens = true
        return configuration
    }

    /// Configures `providerID` against the issuer (built-in ones read its JWKS), enabled. An OIDC
    /// provider proves every domain unless `options` says otherwise: the reference's checklist
    /// (§A.15) was written for that trust, which decision 11 makes the operator's explicit choice.
    @discardableResult
    static func configure(
        _ http: TestHTTPClient, _ issuer: TestIssuer, _ providerID: String = "oidc.test", enabled: Bool = true,
        options: [String: any Sendable] = [:], clientID: String = "client-1"
    ) async throws -> TestHTTPClient.Reply {
        var body: [String: any Sendable] = ["clientId": clientID, "enabled": enabled]
        var accountd = options
        let path: String
        if providerID.hasPrefix("oidc.") {
            if accountd["trustedEmailDomains"] == nil { accountd["trustedEmailDomains"] = ["*"] }
            body["issuer"] = issuer.url
            path = "/v2/projects/demo-test/oauthIdpConfigs?oauthIdpConfigId=\(providerID)"
        } else {
            accountd["jwksUri"] = issuer.jwksURL
            path = "/v2/projects/demo-test/defaultSupportedIdpConfigs?idpId=\(providerID)"
        }
        if !accountd.isEmpty { body["accountdOptions"] = accountd }
        let reply = try await http.admin.post(path, body, headers: [API.admin])
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return reply
    }

    static func signIn(
        _ api: API, _ providerID: String, idToken: String? = nil, nonce: String? = nil, linkTo: String? = nil,
        extra: [String: any Sendable] = [:], postBody: String? = nil
    ) async throws -> TestHTTPClient.Reply {
        var pairs = ["providerId=\(providerID)"]
        if let idToken { pairs.append("id_token=\(idToken)") }
        if let nonce { pairs.append("nonce=\(nonce)") }
        var body: [String: any Sendable] = [
            "requestUri": "http://localhost", "postBody": postBody ?? pairs.joined(separator: "&"), "returnSecureToken": true,
        ]
        if let linkTo { body["idToken"] = linkTo }
        body.merge(extra) { $1 }
        return try await api.client("signInWithIdp", body)
    }

    static func lookup(_ api: API, _ localID: String) async throws -> [String: Any]? {
        (try await api.admin("lookup", ["localId": [localID]]).json["users"] as? [[String: Any]])?.first
    }

    @Test("A1, A2, A18: a Google token signs up, then signs in again with nothing changed; no needConfirmation key")
    func googleSignUpThenIn() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer, "google.com", clientID: "web-client")
                let google = "https://accounts.google.com"
                let token = try issuer.token(
                    sub: "g-1", audience: "web-client", issuer: google, email: "x@gmail.com", emailVerified: true, issuedAt: clock.now(),
                    extra: ["name": "Xavier"])
                let first = try await Self.signIn(api, "google.com", idToken: token)
                #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
                #expect(first.json["isNewUser"] as? Bool == true && first.string("federatedId") == "https://accounts.google.com/g-1")
                #expect(first.json["needConfirmation"] == nil && first.json["errorMessage"] == nil)
                #expect(first.string("oauthIdToken") == token && first.string("pendingToken")?.isEmpty == false)
                let claims = Session(first).claims
                let firebase = claims["firebase"] as? [String: Any]
                #expect(firebase?["sign_in_provider"] as? String == "google.com")
                let identities = firebase?["identities"] as? [String: [String]]
                #expect(identities?["google.com"] == ["g-1"] && identities?["email"] == ["x@gmail.com"])
                #expect(claims["email_verified"] as? Bool == true)

                let again = try issuer.token(
                    sub: "g-1", audience: "web-client", issuer: google, email: "x@gmail.com", emailVerified: true, issuedAt: clock.now(),
                    extra: ["name": "Renamed"])
                let second = try await Self.signIn(api, "google.com", idToken: again)
                #expect(second.string("localId") == first.string("localId") && second.json["isNewUser"] == nil)
                let user = try await Self.lookup(api, first.string("localId") ?? "")
                #expect(user?["displayName"] as? String == "Xavier", "a returning sign-in changes nothing")
                let providers = (user?["providerUserInfo"] as? [[String: Any]])?.compactMap { $0["providerId"] as? String }
                #expect(providers == ["google.com"])
            }
        }
    }

    @Test("a returning user's sign-in writes its session and last sign-in at once; disabled, it is refused and writes nothing")
    func returningUserWrite() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                func token() throws -> String {
                    try issuer.token(sub: "r-1", audience: "client-1", email: "r@example.com", emailVerified: true, issuedAt: clock.now())
                }
                let first = Session(try await Self.signIn(api, "oidc.test", idToken: try token()))
                clock.advance(60)
                let again = try await Self.signIn(api, "oidc.test", idToken: try token())
                #expect(again.status == 200 && again.string("localId") == first.localID)
                #expect(try await api.refresh(Session(again).refreshToken).status == 200)
                let user = try await Self.lookup(api, first.localID)
                #expect(user?["lastLoginAt"] as? String == String(Int64(clock.now().timeIntervalSince1970 * 1000)))
                func sessions() async throws -> Int {
                    let listed = try await api.admin("listSessions", ["localId": first.localID, "includeRevoked": true])
                    return (listed.json["sessions"] as? [[String: Any]])?.count ?? -1
                }
                #expect(try await sessions() == 2)
                // Concurrent sign-ins of the one user queue on its identity's lock: each its own session.
                let idToken = try token()
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<6 { group.addTask { try await Self.signIn(api, "oidc.test", idToken: idToken).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 6))
                #expect(try await sessions() == 8)

                #expect(try await api.admin("update", ["localId": first.localID, "disableUser": true]).status == 200)
                #expect(try await Self.signIn(api, "oidc.test", idToken: try token()).errorCode == "USER_DISABLED")
                #expect(try await sessions() == 8, "a refused sign-in starts no session")
                #expect(try await Self.lookup(api, first.localID)?["lastLoginAt"] as? String == user?["lastLoginAt"] as? String)
            }
        }
    }

    @Test(
        "A3–A5, A7, B7: audience, signature, parse, time and credential refusals in the reference's words; a rotated key is refetched once")
    func tokenRefusals() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await TestIssuer.with { stranger in
                try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                    let api = API(http: http)
                    try await Self.configure(http, issuer)
                    func message(_ token: String) async throws -> String? {
                        try await Self.signIn(api, "oidc.test", idToken: token).errorMessage
                    }
                    let now = clock.now()
                    #expect(
                        try await message(try issuer.token(audience: "X", issuedAt: now))
                            == "INVALID_IDP_RESPONSE : The audience in ID Token [X] does not match the expected audience client-1.")
                    #expect(
                        try await Self.signIn(api, "oidc.test", idToken: try issuer.token(audience: ["client-1", "X"], issuedAt: now))
                            .status == 200)
                    let badSignature = "INVALID_IDP_RESPONSE : Unable to verify the ID Token signature."
                    // Another key under the issuer's kid.
                    let forged = try stranger.token(issuer: issuer.url, issuedAt: now, keyID: issuer.rsaKeyID)
                    #expect(try await message(forged) == badSignature)
                    #expect(try await message(try issuer.token(issuedAt: now, keyID: "nobody")) == badSignature)
                    let parts = try issuer.token(issuedAt: now).split(separator: ".")
                    let hs256 = TestBase64URL.encode(Array(#"{"alg":"HS256","kid":"rsa-1"}"#.utf8)) + ".\(parts[1]).\(parts[2])"
                    #expect(try await message(hs256) == badSignature)
                    #expect(try await message("garbage") == "INVALID_IDP_RESPONSE : Unable to parse the ID Token.")
                    #expect(
                        try await message(try issuer.token(issuer: "https://elsewhere.example", issuedAt: now))
                            == "INVALID_IDP_RESPONSE : The issuer in ID Token https://elsewhere.example does not match the expected one in config: \(issuer.url)."
                    )
                    for issued in [now - 7200, now + 300] {
                        #expect(
                            try await message(try issuer.token(issuedAt: issued))
                                == "INVALID_IDP_RESPONSE : ID Token issued at \(Int(issued.timeIntervalSince1970)) is stale to sign-in.")
                    }
                    #expect(
                        try await Self.signIn(
                            api, "oidc.test",
                            idToken: try issuer.token(sub: "nbf", issuedAt: now, extra: ["nbf": Int(now.timeIntervalSince1970) + 600])
                        ).status == 200)
                    #expect(
                        try await message(try issuer.token(sub: "", issuedAt: now))?.hasPrefix(
                            "INVALID_IDP_RESPONSE : ID Token does not contain user's identity in 'sub' claim: ") == true)
                    #expect(
                        try await Self.signIn(api, "oidc.test", idToken: try issuer.token(sub: "es", issuedAt: now, algorithm: "ES256"))
                            .status == 200)
                    #expect(
                        try await Self.signIn(api, "oidc.test", idToken: try issuer.token(sub: "ps", issuedAt: now, algorithm: "PS256"))
                            .status == 200)

                    let onlyAccess = try await Self.signIn(api, "oidc.test", postBody: "providerId=oidc.test&access_token=at")
                    #expect(
                        onlyAccess.errorMessage
                            == "INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: http://localhost?providerId=oidc.test&access_token=at"
                    )

                    // B7: the issuer rotates; the first token with the new kid makes one refetch (the
                    // unknown kid above had one; a minute later another is allowed).
                    clock.advance(61)
                    let later = clock.now()
                    let before = issuer.fetches
                    issuer.rotate(to: "rsa-2")
                    #expect(
                        try await Self.signIn(api, "oidc.test", idToken: try issuer.token(sub: "rotated", issuedAt: later)).status == 200)
                    #expect(issuer.fetches == before + 1)
                    // Within 60 s an unknown kid does not fetch again.
                    #expect(try await message(try issuer.token(issuedAt: later, keyID: "rsa-3")) == badSignature)
                    #expect(issuer.fetches == before + 1)
                }
            }
        }
    }

    @Test("A6: unknown, unconfigured and disabled providers, in that order of checks")
    func providers() async throws {
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated()) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer, "oidc.off", enabled: false)
                let token = try issuer.token(issuedAt: Date())
                #expect(
                    try await Self.signIn(api, "oidc.y", idToken: token).errorMessage
                        == "OPERATION_NOT_ALLOWED : The identity provider configuration is not found.")
                #expect(
                    try await Self.signIn(api, "oidc.off", idToken: token).errorMessage
                        == "OPERATION_NOT_ALLOWED : The identity provider configuration is disabled.")
                #expect(
                    try await Self.signIn(api, "foo", idToken: token).errorMessage == "INVALID_PROVIDER_ID : Provider Id is not supported.")
                #expect(try await Self.signIn(api, "password", idToken: token).errorCode == "INVALID_PROVIDER_ID")
                #expect(try await Self.signIn(api, "facebook.com", idToken: token).errorCode == "OPERATION_NOT_ALLOWED")
                #expect(try await api.client("signInWithIdp", ["postBody": "providerId=oidc.off"]).errorCode == "MISSING_REQUEST_URI")
                #expect(
                    try await api.client("signInWithIdp", ["requestUri": "not a uri", "postBody": "x=1"]).errorCode == "INVALID_REQUEST_URI"
                )
            }
        }
    }

    @Test("A8: a nonce-bearing Apple token needs its raw nonce and signs in once")
    func nonces() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer, "apple.com", clientID: "com.example.services")
                let raw = "raw-nonce-1"
                let hashed = SHA256.hash(data: Array(raw.utf8)).map { String(format: "%02x", $0) }.joined()
                let token = try issuer.token(
                    sub: "a-1", audience: "com.example.services", issuer: "https://appleid.apple.com", issuedAt: clock.now(),
                    extra: ["nonce": hashed])
                #expect(
                    try await Self.signIn(api, "apple.com", idToken: token).errorMessage
                        == "MISSING_OR_INVALID_NONCE : Nonce is missing in the request.")
                #expect(
                    try await Self.signIn(api, "apple.com", idToken: token, nonce: "other").errorMessage
                        == "MISSING_OR_INVALID_NONCE : Nonce does not match.")
                #expect(try await Self.signIn(api, "apple.com", idToken: token, nonce: raw).status == 200)
                let duplicate = "MISSING_OR_INVALID_NONCE : Duplicate credential received. Please try again with a new credential."
                #expect(try await Self.signIn(api, "apple.com", idToken: token, nonce: raw).errorMessage == duplicate)
                #expect(try await Self.signIn(api, "apple.com", idToken: token, nonce: "other").errorMessage == duplicate)
            }
        }
    }

    @Test("A9, THE RULE: a trusted IdP asserting the verified email of a squatter's unverified account strips it and revokes its sessions")
    func takeoverClosed() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                // The squatter signs up with the victim's address and keeps a session.
                let squatter = try await api.signUp("victim@example.com", "squatter-pass")
                clock.advance(2)
                let token = try issuer.token(sub: "victim", email: "Victim@Example.com", emailVerified: true, issuedAt: clock.now())
                let victim = try await Self.signIn(api, "oidc.test", idToken: token)
                #expect(victim.status == 200)
                #expect(victim.string("localId") == squatter.localID, "same account")
                #expect(victim.json["isNewUser"] == nil && victim.json["emailVerified"] as? Bool == true)
                // The squatter's password and sessions are gone.
                #expect(
                    try await api.client("signInWithPassword", ["email": "victim@example.com", "password": "squatter-pass"]).errorCode
                        == "INVALID_PASSWORD")
                #expect(try await api.refresh(squatter.refreshToken).errorCode == "TOKEN_EXPIRED")
                let methods = try await api.client(
                    "createAuthUri", ["identifier": "victim@example.com", "continueUri": "http://localhost"])
                #expect(methods.json["signinMethods"] as? [String] == ["oidc.test"])
                let sessions = try await api.admin("listSessions", ["localId": squatter.localID, "includeRevoked": true])
                let reasons = (sessions.json["sessions"] as? [[String: Any]] ?? []).compactMap { $0["revokeReason"] as? String }
                #expect(reasons.contains("IDP_TAKEOVER_PROTECTION"), "\(reasons)")
                // The victim's own session works.
                #expect(try await api.refresh(Session(victim).refreshToken).status == 200)
            }
        }
    }

    @Test(
        "A10, A11: an untrusted assertion answers needConfirmation and changes nothing; its pending token links once signed in; google.com trusts hd"
    )
    func needConfirmation() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                try await Self.configure(http, issuer, "google.com", clientID: "web-client")
                let owner = try await api.signUp("u@example.com")
                let token = try issuer.token(sub: "u", email: "u@example.com", emailVerified: false, issuedAt: clock.now())
                let reply = try await Self.signIn(api, "oidc.test", idToken: token)
                #expect(reply.status == 200 && reply.json["needConfirmation"] as? Bool == true)
                #expect(reply.string("localId") == owner.localID && reply.json["idToken"] == nil && reply.json["errorMessage"] == nil)
                #expect(reply.json["refreshToken"] == nil)
                let untouched = try #require(try await Self.lookup(api, owner.localID))
                #expect(untouched["emailVerified"] as? Bool != true, "the email stays unverified")
                let providersBefore = (untouched["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
                #expect(providersBefore == ["password"], "no identity is linked")
                #expect(try await api.signIn("u@example.com").localID == owner.localID, "the account is untouched")
                let pending = try #require(reply.string("pendingToken"))
                let linked = try await api.client(
                    "signInWithIdp", ["requestUri": "http://localhost", "pendingToken": pending, "idToken": owner.idToken])
                #expect(
                    linked.status == 200 && linked.string("localId") == owner.localID, "\(String(decoding: linked.body, as: UTF8.self))")
                #expect(try await api.signIn("u@example.com").localID == owner.localID, "linking strips nothing")
                let providersAfter = (try await Self.lookup(api, owner.localID)?["providerUserInfo"] as? [[String: Any]] ?? [])
                    .compactMap { $0["providerId"] as? String }
                #expect(Set(providersAfter) == ["password", "oidc.test"], "the pending identity is linked")

                // google.com proves only Gmail, or the domain its hd names.
                let google = "https://accounts.google.com"
                let workspaceUser = try await api.signUp("w@corp.example")
                let noHD = try issuer.token(
                    sub: "g-w", audience: "web-client", issuer: google, email: "w@corp.example", emailVerified: true, issuedAt: clock.now())
                #expect(try await Self.signIn(api, "google.com", idToken: noHD).json["needConfirmation"] as? Bool == true)
                let withHD = try issuer.token(
                    sub: "g-w", audience: "web-client", issuer: google, email: "w@corp.example", emailVerified: true, issuedAt: clock.now(),
                    extra: ["hd": "corp.example"])
                let trusted = try await Self.signIn(api, "google.com", idToken: withHD)
                #expect(trusted.string("localId") == workspaceUser.localID && trusted.json["idToken"] != nil)
                #expect(
                    try await api.client("signInWithPassword", ["email": "w@corp.example", "password": "secret-pass"]).errorCode
                        == "INVALID_PASSWORD")
            }
        }
    }

    @Test("A12–A15: linking refusals (with returnIdpCredential as 200 errorMessage), a phone-only user gains an email, autoCreate false")
    func linking() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                let v = try await Self.signIn(api, "oidc.test", idToken: try issuer.token(sub: "g", issuedAt: clock.now()))
                #expect(v.status == 200)
                let u = try await api.signUp("u@example.com")
                let taken = try issuer.token(sub: "g", issuedAt: clock.now())
                #expect(
                    try await Self.signIn(api, "oidc.test", idToken: taken, linkTo: u.idToken).errorCode
                        == "FEDERATED_USER_ID_ALREADY_LINKED")
                let soft = try await Self.signIn(api, "oidc.test", idToken: taken, linkTo: u.idToken, extra: ["returnIdpCredential": true])
                #expect(soft.status == 200 && soft.string("errorMessage") == "FEDERATED_USER_ID_ALREADY_LINKED")
                #expect(soft.json["localId"] == nil && soft.json["idToken"] == nil)

                let s1 = try await Self.signIn(
                    api, "oidc.test", idToken: try issuer.token(sub: "s1", issuedAt: clock.now()), linkTo: u.idToken)
                #expect(s1.status == 200 && s1.string("localId") == u.localID)
                #expect(
                    try await Self.signIn(api, "oidc.test", idToken: try issuer.token(sub: "s2", issuedAt: clock.now()), linkTo: u.idToken)
                        .errorCode == "PROVIDER_ALREADY_LINKED")

                // A14: a phone-only user links an identity with an email.
                #expect(try await api.admin("signUp", ["localId": "phone-user", "phoneNumber": "+15555550123"]).status == 200)
                let phone = Session(
                    try await api.client(
                        "signInWithCustomToken", ["token": try ServiceAccount.unsigned(uid: "phone-user", issuedAt: clock.now())]))
                let withEmail = try issuer.token(sub: "p", email: "p@example.com", emailVerified: true, issuedAt: clock.now())
                #expect(try await Self.signIn(api, "oidc.test", idToken: withEmail, linkTo: phone.idToken).status == 200)
                let user = try await Self.lookup(api, "phone-user")
                #expect(user?["email"] as? String == "p@example.com" && user?["emailVerified"] as? Bool == true)
                #expect(user?["phoneNumber"] as? String == "+15555550123")
                #expect(try await api.refresh(phone.refreshToken).status == 200, "linking revokes nothing")

                // A15
                let unknown = try issuer.token(sub: "nobody-yet", issuedAt: clock.now())
                #expect(
                    try await Self.signIn(api, "oidc.test", idToken: unknown, extra: ["autoCreate": false]).errorCode == "USER_NOT_FOUND")
                #expect(
                    try await api.admin("lookup", ["federatedUserId": [["providerId": "oidc.test", "rawId": "nobody-yet"]]]).json["users"]
                        == nil)
            }
        }
    }

    @Test("concurrency: two first sign-ins of one identity make one user, one isNewUser; sign-in attributes ride through refreshes")
    func concurrentFirstSignIns() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                let tokens = try (0..<2).map { device in
                    try issuer.token(sub: "twin", issuedAt: clock.now(), extra: ["department": "R&D", "device": device])
                }
                async let a = Self.signIn(api, "oidc.test", idToken: tokens[0])
                async let b = Self.signIn(api, "oidc.test", idToken: tokens[1])
                let both = try await [a, b]
                #expect(both.allSatisfy { $0.status == 200 }, "\(both.map { String(decoding: $0.body, as: UTF8.self) })")
                #expect(Set(both.compactMap { $0.string("localId") }).count == 1)
                #expect(both.filter { $0.json["isNewUser"] as? Bool == true }.count == 1)
                let session = Session(both[0])
                clock.advance(5)
                let refreshed = Session(try await api.refresh(session.refreshToken))
                let attributes = (refreshed.claims["firebase"] as? [String: Any])?["sign_in_attributes"] as? [String: Any]
                #expect(attributes?["department"] as? String == "R&D")
            }
        }
    }

    @Test("B6: a provider disabled through one replica refuses sign-ins on another, its cached config dropped by NOTIFY")
    func disabledEverywhere() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: database, clock: clock) { first in
                try await withServer(Self.configuration(), database: database, clock: clock) { second in
                    try await Self.configure(first, issuer)
                    #expect(
                        try await Self.signIn(API(http: second), "oidc.test", idToken: try issuer.token(issuedAt: clock.now())).status
                            == 200)
                    let patched = try await first.admin.send(
                        .PATCH, "/v2/projects/demo-test/oauthIdpConfigs/oidc.test?updateMask=enabled",
                        body: Data(#"{"enabled":false}"#.utf8),
                        headers: [API.admin, ("Content-Type", "application/json")])
                    #expect(patched.status == 200)
                    // The second replica served from its cache; the first's NOTIFY drops the entry
                    // within B6's second (it takes milliseconds).
                    let refusedAfter = try await ReplicaTests.timeUntil(limit: .seconds(1)) {
                        try await Self.signIn(API(http: second), "oidc.test", idToken: try issuer.token(issuedAt: clock.now())).errorMessage
                            == "OPERATION_NOT_ALLOWED : The identity provider configuration is disabled."
                    }
                    #expect(refusedAfter != nil)
                    // Enabled again through the second replica: it answers at once (its own write
                    // dropped its entry), and the first, whose cache never held it, too.
                    let enabled = try await second.admin.send(
                        .PATCH, "/v2/projects/demo-test/oauthIdpConfigs/oidc.test?updateMask=enabled",
                        body: Data(#"{"enabled":true}"#.utf8),
                        headers: [API.admin, ("Content-Type", "application/json")])
                    #expect(enabled.status == 200)
                    #expect(
                        try await Self.signIn(API(http: second), "oidc.test", idToken: try issuer.token(issuedAt: clock.now())).status
                            == 200)
                }
            }
        }
    }

    @Test("B.5: idpConfigs:testCredential and accountctl idp test check a token as a sign-in would, disabled or not, touching no account")
    func testCredential() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                try await Self.configure(http, issuer, enabled: false)
                let path = "/v1/projects/demo-test/idpConfigs:testCredential"
                let token = try issuer.token(sub: "tester", email: "tester@example.com", emailVerified: true, issuedAt: clock.now())
                let tested = try await http.admin.post(path, ["providerId": "oidc.test", "idToken": token], headers: [API.admin])
                #expect(tested.status == 200, "\(String(decoding: tested.body, as: UTF8.self))")
                #expect(tested.json["trusted"] as? Bool == true && tested.json["emailVerified"] as? Bool == true)
                #expect(tested.string("email") == "tester@example.com")
                #expect((tested.json["claims"] as? [String: Any])?["sub"] as? String == "tester")
                // A.4's refusals, in its words; an unknown provider; a client is not an admin.
                let stale = try issuer.token(sub: "tester", issuedAt: clock.now() - 7200)
                let refused = try await http.admin.post(path, ["providerId": "oidc.test", "idToken": stale], headers: [API.admin])
                #expect(refused.status == 400 && refused.errorMessage?.hasSuffix("is stale to sign-in.") == true)
                #expect(
                    try await http.admin.post(path, ["providerId": "oidc.none", "idToken": token], headers: [API.admin]).errorCode
                        == "CONFIGURATION_NOT_FOUND")
                #expect(try await http.post(path + "?key=\(API.key)", ["providerId": "oidc.test", "idToken": token]).status != 200)
                // Nothing was created, and the token (it has no nonce) still signs in once enabled.
                #expect(try await Self.lookup(API(http: http), "tester") == nil)
                let users = try await API(http: http).admin("lookup", ["email": ["tester@example.com"]])
                #expect(users.json["users"] == nil)

                // The same through accountctl, the token from a file.
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("idtoken-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(token.utf8).write(to: file)
                let url = "http://127.0.0.1:\(http.adminPort!)"
                let cli = try await AccountctlTests.run(["idp", "test", "oidc.test", "--id-token-file", file.path], url: url)
                #expect(cli.status == 0, "\(cli.errors)")
                #expect(cli.output.contains("tester@example.com") && cli.output.contains("trusted"))
                try Data(stale.utf8).write(to: file)
                let cliRefused = try await AccountctlTests.run(["idp", "test", "oidc.test", "--id-token-file", file.path], url: url)
                #expect(cliRefused.status == 65 && cliRefused.errors.contains("stale"))
            }
        }
    }

    @Test("A.11: lookup by federatedUserId, discovery of a federated-only email, admin link and unlink")
    func aroundTheEndpoint() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(Self.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                let signedIn = try await Self.signIn(
                    api, "oidc.test",
                    idToken: try issuer.token(sub: "fed", email: "fed@example.com", emailVerified: true, issuedAt: clock.now()))
                let localID = try #require(signedIn.string("localId"))
                let found = try await api.admin("lookup", ["federatedUserId": [["providerId": "oidc.test", "rawId": "fed"]]])
                #expect((found.json["users"] as? [[String: Any]])?.first?["localId"] as? String == localID)
                let info = (found.json["users"] as? [[String: Any]])?.first?["providerUserInfo"] as? [[String: Any]]
                #expect(info?.first?["federatedId"] as? String == "fed" && info?.first?["rawId"] as? String == "fed")

                // An account known only through an identity's email.
                _ = try await Self.signIn(
                    api, "oidc.test", idToken: try issuer.token(sub: "only", email: "only-idp@example.com", issuedAt: clock.now()))
                let discovered = try await api.client(
                    "createAuthUri", ["identifier": "only-idp@example.com", "continueUri": "http://localhost"])
                #expect(discovered.json["registered"] as? Bool == true)

                // Admin link (no configuration needed) and its refusals.
                let other = try await api.signUp("other@example.com")
                let link = { (provider: String, raw: String) -> [String: any Sendable] in
                    ["localId": other.localID, "linkProviderUserInfo": ["providerId": provider, "rawId": raw]]
                }
                #expect(try await api.admin("update", link("saml.partner", "p-1")).status == 200)
                #expect(try await api.admin("update", link("password", "x")).errorCode == "INVALID_PROVIDER_ID")
                #expect(
                    try await api.admin("update", link("saml.partner", "")).errorMessage
                        == "INVALID_PROVIDER_ID : rawId must be a non-empty string")
                #expect(try await api.admin("update", link("oidc.test", "fed")).errorCode == "FEDERATED_USER_ID_ALREADY_LINKED")
                let afterLink = try await Self.lookup(api, other.localID)
                #expect(
                    (afterLink?["providerUserInfo"] as? [[String: Any]])?.contains { $0["providerId"] as? String == "saml.partner" } == true
                )
                // The user unlinks it, as the JS SDK's unlink does.
                let unlinked = try await api.client("update", ["idToken": other.idToken, "deleteProvider": ["saml.partner"]])
                #expect(unlinked.status == 200)
                #expect(
                    (unlinked.json["providerUserInfo"] as? [[String: Any]])?.contains { $0["providerId"] as? String == "saml.partner" }
                        != true)
            }
        }
    }
}

/// §A.5: flows started by createAuthUri, completed by the IdP's redirect back.
@Suite("Federated redirect flows (§A.5)")
struct RedirectFlowTests {
    /// The query of an authUri, by name.
    static func query(_ authURI: String) -> [String: String] {
        var items: [String: String] = [:]
        for item in URLComponents(string: authURI)?.queryItems ?? [] { items[item.name] = item.value ?? "" }
        return items
    }

    static func start(_ api: API, _ provider: String, sessionID: String = "session-1", extra: [String: any Sendable] = [:]) async throws
        -> TestHTTPClient.Reply
    {
        var body: [String: any Sendable] = [
            "providerId": provider, "continueUri": "https://app.example.com/finish", "sessionId": sessionID, "context": "ctx-1",
        ]
        body.merge(extra) { $1 }
        return try await api.client("createAuthUri", body)
    }

    static func callback(_ api: API, _ query: String, sessionID: String = "session-1", extra: [String: any Sendable] = [:]) async throws
        -> TestHTTPClient.Reply
    {
        var body: [String: any Sendable] = [
            "requestUri": "https://app.example.com/finish?\(query)", "sessionId": sessionID, "returnSecureToken": true,
        ]
        body.merge(extra) { $1 }
        return try await api.client("signInWithIdp", body)
    }

    @Test("A16: an id_token flow: the URL's parameters, the callback with the flow's session, a replay, another session")
    func idTokenFlow() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(FederationTests.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await FederationTests.configure(http, issuer)
                let started = try await Self.start(api, "oidc.test")
                #expect(started.status == 200, "\(String(decoding: started.body, as: UTF8.self))")
                let authURI = try #require(started.string("authUri"))
                #expect(authURI.hasPrefix(issuer.url + "/authorize?"))
                let query = Self.query(authURI)
                #expect(query["response_type"] == "id_token" && query["scope"] == "openid" && query["client_id"] == "client-1")
                #expect(query["redirect_uri"] == "https://app.example.com/finish")
                let nonce = try #require(query["nonce"])
                #expect(nonce.count == 64 && nonce.allSatisfy(\.isHexDigit))
                let state = try #require(query["state"])
                let token = try issuer.token(sub: "flow-user", issuedAt: clock.now(), extra: ["nonce": nonce])
                let done = try await Self.callback(api, "state=\(state)#id_token=\(token)")
                #expect(done.status == 200 && done.string("context") == "ctx-1", "\(String(decoding: done.body, as: UTF8.self))")
                #expect(done.json["idToken"] != nil && done.json["isNewUser"] as? Bool == true)
                #expect(
                    try await Self.callback(api, "state=\(state)#id_token=\(token)").errorMessage
                        == "INVALID_IDP_RESPONSE : The sign-in session is unknown or expired.")

                let second = Self.query(try #require(try await Self.start(api, "oidc.test").string("authUri")))
                let other = try issuer.token(sub: "flow-user", issuedAt: clock.now(), extra: ["nonce": second["nonce"] ?? ""])
                #expect(
                    try await Self.callback(api, "state=\(second["state"] ?? "")&id_token=\(other)", sessionID: "another").errorMessage
                        == "INVALID_IDP_RESPONSE : sessionId does not match.")
                let wrongNonce = try issuer.token(sub: "flow-user", issuedAt: clock.now(), extra: ["nonce": "x"])
                #expect(
                    try await Self.callback(api, "state=\(second["state"] ?? "")&id_token=\(wrongNonce)").errorMessage
                        == "MISSING_OR_INVALID_NONCE : Nonce does not match.")
                #expect(
                    try await Self.callback(api, "state=\(second["state"] ?? "")&error=access_denied&error_description=no").errorMessage
                        == "USER_CANCELLED : no")
                // The flow survived the refusals; the redirect must come back to where it was sent.
                let elsewhere = try await api.client(
                    "signInWithIdp",
                    [
                        "requestUri": "https://evil.example/finish?state=\(second["state"] ?? "")&id_token=\(other)",
                        "sessionId": "session-1",
                    ])
                #expect(elsewhere.errorCode == "INVALID_REQUEST_URI")
                #expect(try await Self.callback(api, "state=\(second["state"] ?? "")&id_token=\(other)").status == 200)

                // createAuthUri's own refusals.
                #expect(try await api.client("createAuthUri", ["providerId": "oidc.test"]).errorCode == "MISSING_CONTINUE_URI")
                #expect(
                    try await api.client("createAuthUri", ["providerId": "oidc.test", "continueUri": "https://app.example.com/a?state=1"])
                        .errorCode == "INVALID_CONTINUE_URI")
                #expect(
                    try await api.client("createAuthUri", ["providerId": "oidc.test", "continueUri": "https://evil.example/"]).errorMessage
                        == "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
                #expect(
                    try await api.client("createAuthUri", ["providerId": "oidc.none", "continueUri": "https://app.example.com/"])
                        .errorMessage
                        == "OPERATION_NOT_ALLOWED : The identity provider configuration is not found.")
            }
        }
    }

    @Test("A17: a code flow exchanges the code with PKCE and the client secret; a rejected code and an unreachable endpoint are 400s")
    func codeFlow() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(FederationTests.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                let configured = try await http.admin.post(
                    "/v2/projects/demo-test/oauthIdpConfigs?oauthIdpConfigId=oidc.code",
                    [
                        "clientId": "client-1", "issuer": issuer.url, "enabled": true, "responseType": ["code": true],
                        "clientSecret": "idp-client-secret",
                    ], headers: [API.admin])
                #expect(configured.status == 200)
                let query = Self.query(try #require(try await Self.start(api, "oidc.code").string("authUri")))
                #expect(query["response_type"] == "code" && query["scope"] == "openid email profile")
                #expect(query["code_challenge_method"] == "S256" && query["code_challenge"]?.isEmpty == false)
                let state = try #require(query["state"])
                let token = try issuer.token(
                    sub: "coder", email: "coder@example.com", emailVerified: true, issuedAt: clock.now(),
                    extra: ["nonce": query["nonce"] ?? ""])
                issuer.issue(code: "code-1", idToken: token, challenge: query["code_challenge"])
                let done = try await Self.callback(api, "state=\(state)&code=code-1", extra: ["returnIdpCredential": true])
                #expect(done.status == 200, "\(String(decoding: done.body, as: UTF8.self))")
                #expect(done.string("email") == "coder@example.com" && done.string("oauthAccessToken") == "idp-access-token")
                #expect(done.json["oauthRefreshToken"] == nil, "only with returnRefreshToken")
                #expect(
                    issuer.lastTokenForm["client_secret"] == "idp-client-secret"
                        && issuer.lastTokenForm["grant_type"] == "authorization_code")

                for (status, message) in [
                    (400, "INVALID_IDP_RESPONSE : The authorization code was rejected."),
                    (503, "INVALID_IDP_RESPONSE : Error connecting to the given credential's issuer."),
                ] {
                    let flow = Self.query(try #require(try await Self.start(api, "oidc.code").string("authUri")))
                    issuer.forceTokenStatus(status)
                    let refused = try await Self.callback(api, "state=\(flow["state"] ?? "")&code=whatever")
                    #expect(refused.status == 400 && refused.errorMessage == message)
                }
                issuer.forceTokenStatus(0)

                // A token endpoint nobody answers at: the same 400, at once.
                let deadEnd = try await http.admin.post(
                    "/v2/projects/demo-test/oauthIdpConfigs?oauthIdpConfigId=oidc.deadend",
                    [
                        "clientId": "client-1", "issuer": issuer.url, "enabled": true, "responseType": ["code": true],
                        "clientSecret": "idp-client-secret", "accountdOptions": ["tokenEndpoint": "http://127.0.0.1:1/token"],
                    ], headers: [API.admin])
                #expect(deadEnd.status == 200, "\(String(decoding: deadEnd.body, as: UTF8.self))")
                let flow = Self.query(try #require(try await Self.start(api, "oidc.deadend").string("authUri")))
                let unreachable = try await Self.callback(api, "state=\(flow["state"] ?? "")&code=whatever")
                #expect(
                    unreachable.status == 400
                        && unreachable.errorMessage == "INVALID_IDP_RESPONSE : Error connecting to the given credential's issuer.")
            }
        }
    }
}

@Suite("Insecure IdP test mode (§A.13)")
struct InsecureIdPModeTests {
    @Test("demo- only: bare JSON and unsigned tokens for any provider, the emulator's texts for sub; a real project refuses to start")
    func testMode() async throws {
        var configuration = FederationTests.configuration()
        configuration.federation.acceptUnverifiedIdPTokens = true
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let bare = #"{"sub":"emu-1","email":"emu@example.com","email_verified":true}"#
            let signedIn = try await api.client(
                "signInWithIdp",
                [
                    "requestUri": "http://localhost",
                    "postBody": "providerId=google.com&id_token=\(bare.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                ])
            #expect(
                signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == true, "\(String(decoding: signedIn.body, as: UTF8.self))")
            let unsigned =
                TestBase64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + TestBase64URL.encode(Array(#"{"sub":"emu-2"}"#.utf8)) + "."
            #expect(try await FederationTests.signIn(api, "oidc.anything", idToken: unsigned).status == 200)
            #expect(
                try await FederationTests.signIn(api, "oidc.anything", idToken: #"{"email":"x@example.com"}"#).errorMessage
                    == #"INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing required fields. ((Missing "sub" field. This field is required and must be a unique identifier.))"#
            )
            #expect(
                try await FederationTests.signIn(api, "oidc.anything", idToken: #"{"sub":7}"#).errorMessage
                    == #"INVALID_IDP_RESPONSE : ((The "sub" field must be a string.))"#)
            #expect(try await FederationTests.signIn(api, "saml.partner", idToken: bare).errorCode == "OPERATION_NOT_ALLOWED")
        }
        let production = [
            "ACCOUNTD_PROJECT_ID": "acme-prod", "ACCOUNTD_API_KEYS": "k1", "ACCOUNTD_ADMIN_TOKENS": "ops:s3cret-7Hq2vX9pL4mZ8wR0a",
            "ACCOUNTD_KEY_ENCRYPTION_KEY": String(repeating: "ab", count: 32), "ACCOUNTD_MAIL_TRANSPORT": "smtp",
            "ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS": "1",
        ]
        #expect(throws: ConfigurationError.self) { try Configuration(ConfigurationInput().merged(withEnvironment: production)) }
    }
}

@Suite("Federated sign-in in a production configuration")
struct ProductionFederationTests {
    @Test(
        "a real project: an HTTPS issuer behind a private CA (ACCOUNTD_IDP_CA_FILE), configured on the admin listener; without the CA its keys are unreachable, a 400"
    )
    func httpsIssuer() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        try await TestIssuer.with(tls: true) { issuer in
            let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("idp-ca-\(UUID().uuidString).pem")
            try Data(issuer.certificatePEM!.utf8).write(to: caFile)
            defer { try? FileManager.default.removeItem(at: caFile) }
            var configuration = productionConfiguration()
            configuration.federation.caFile = caFile.path
            configuration.accounts.emailEnumerationProtection = true  // a real project's default
            let token = try issuer.token(sub: "corp-1", email: "corp@corp.example", emailVerified: true, issuedAt: clock.now())
            let body: [String: any Sendable] = ["requestUri": "http://localhost", "postBody": "providerId=oidc.corp&id_token=\(token)"]
            try await withServer(configuration, database: database, clock: clock) { http in
                let api = API(http: http, project: "acme-prod")
                let configured = try await http.admin.post(
                    "/v2/projects/acme-prod/oauthIdpConfigs?oauthIdpConfigId=oidc.corp",
                    ["clientId": "client-1", "issuer": issuer.url, "enabled": true], headers: [API.admin])
                #expect(configured.status == 200, "\(String(decoding: configured.body, as: UTF8.self))")
                // A plain-HTTP loopback issuer is a demo- convenience only.
                #expect(
                    try await http.admin.post(
                        "/v2/projects/acme-prod/oauthIdpConfigs?oauthIdpConfigId=oidc.plain",
                        ["clientId": "c", "issuer": "http://127.0.0.1:9"], headers: [API.admin]
                    ).errorCode == "INVALID_ISSUER")
                let signedIn = try await api.client("signInWithIdp", body)
                #expect(
                    signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == true,
                    "\(String(decoding: signedIn.body, as: UTF8.self))")
                // Enumeration protection is on for a real project: needConfirmation names no account.
                _ = try await api.signUp("taken@corp.example")
                let unproven = try issuer.token(sub: "corp-2", email: "taken@corp.example", emailVerified: false, issuedAt: clock.now())
                let confirm = try await api.client(
                    "signInWithIdp", ["requestUri": "http://localhost", "postBody": "providerId=oidc.corp&id_token=\(unproven)"])
                #expect(confirm.json["needConfirmation"] as? Bool == true && confirm.json["localId"] == nil)
            }
            var untrusting = productionConfiguration()
            untrusting.federation.caFile = nil
            try await withServer(untrusting, database: database, clock: clock) { http in
                let refused = try await API(http: http, project: "acme-prod").client("signInWithIdp", body)
                #expect(
                    refused.status == 400
                        && refused.errorMessage == "INVALID_IDP_RESPONSE : Error connecting to the given credential's issuer.")
            }
        }
    }
}

extension RedirectFlowTests {
    @Test("Apple: code id_token with form_post; the code exchanged with an ES256 client secret signed by the configured key")
    func appleCodeFlow() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(FederationTests.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                let appleKey = P256.Signing.PrivateKey()
                let configured = try await http.admin.post(
                    "/v2/projects/demo-test/defaultSupportedIdpConfigs?idpId=apple.com",
                    [
                        "clientId": "com.example.web", "enabled": true,
                        "appleSignInConfig": [
                            "codeFlowConfig": ["teamId": "TEAM123", "keyId": "KEY456", "privateKey": appleKey.pemRepresentation]
                        ],
                        "accountdOptions": [
                            "jwksUri": issuer.jwksURL, "authorizationEndpoint": issuer.url + "/authorize",
                            "tokenEndpoint": issuer.url + "/token",
                        ],
                    ], headers: [API.admin])
                #expect(configured.status == 200, "\(String(decoding: configured.body, as: UTF8.self))")
                #expect(!String(decoding: configured.body, as: UTF8.self).contains("PRIVATE KEY"), "the key is never returned")
                let query = Self.query(try #require(try await Self.start(api, "apple.com").string("authUri")))
                #expect(query["response_type"] == "code id_token" && query["response_mode"] == "form_post")
                let token = try issuer.token(
                    sub: "apple-user", audience: "com.example.web", issuer: "https://appleid.apple.com",
                    email: "a@privaterelay.appleid.com",
                    emailVerified: true, issuedAt: clock.now(), extra: ["nonce": query["nonce"] ?? ""])
                issuer.issue(code: "apple-code", idToken: token, challenge: nil)
                // Apple posts the form back to the app, which hands it over as postBody.
                let done = try await api.client(
                    "signInWithIdp",
                    [
                        "requestUri": "https://app.example.com/finish", "sessionId": "session-1",
                        "postBody": "state=\(query["state"] ?? "")&code=apple-code&id_token=\(token)",
                    ])
                #expect(done.status == 200 && done.string("providerId") == "apple.com", "\(String(decoding: done.body, as: UTF8.self))")
                #expect(done.string("federatedId") == "apple.com/apple-user")
                // The client secret Apple received: an ES256 JWT by the configured key.
                let secret = try #require(issuer.lastTokenForm["client_secret"])
                let parts = secret.split(separator: ".")
                #expect(parts.count == 3)
                let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(String(parts[2])) ?? [])
                #expect(appleKey.publicKey.isValidSignature(signature, for: SHA256.hash(data: Array("\(parts[0]).\(parts[1])".utf8))))
                let claims = (try? JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(parts[1])) ?? []))) as? [String: Any]
                #expect(claims?["iss"] as? String == "TEAM123" && claims?["sub"] as? String == "com.example.web")
                #expect(claims?["aud"] as? String == "https://appleid.apple.com")
            }
        }
    }
}

extension FederationTests {
    @Test("decision 2: linking needs a recent sign-in, except for an anonymous account (the upgrade every SDK offers)")
    func linkingNeedsRecentSignIn() async throws {
        let clock = ManualClock()
        let configuration = {
            var configuration = Self.configuration()
            configuration.accounts.allowAnonymous = true
            return configuration
        }()
        try await TestIssuer.with { issuer in
            try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await Self.configure(http, issuer)
                let member = try await api.signUp("member@example.com")
                let guest = Session(try await api.client("signUp", ["returnSecureToken": true]))
                #expect(!guest.idToken.isEmpty)
                clock.advance(600)
                // ID tokens minted now still carry the sessions' old auth_time.
                let memberNow = Session(try await api.refresh(member.refreshToken))
                let guestNow = Session(try await api.refresh(guest.refreshToken))
                let old = try await Self.signIn(
                    api, "oidc.test", idToken: try issuer.token(sub: "m", issuedAt: clock.now()), linkTo: memberNow.idToken)
                #expect(old.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
                let upgraded = try await Self.signIn(
                    api, "oidc.test",
                    idToken: try issuer.token(sub: "g", email: "g@example.com", emailVerified: true, issuedAt: clock.now()),
                    linkTo: guestNow.idToken)
                #expect(upgraded.status == 200 && upgraded.string("localId") == guest.localID)
                let user = try await Self.lookup(api, guest.localID)
                #expect(user?["email"] as? String == "g@example.com")
            }
        }
    }
}
