import AccountCore
import Foundation
import Testing

/// Federated sign-in's decisions (federation-and-limits.md §A.7–§A.9), without a database or an IdP.
@Suite("Federation rules (pure)")
struct FederationRulesTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func assertion(
        _ sub: String = "sub-1", email: String? = "ann@corp.example", verified: Bool = true, provider: String = "oidc.corp"
    )
        -> IdPAssertion
    {
        IdPAssertion(providerID: provider, rawID: sub, email: email, emailVerified: verified, displayName: "Ann IdP", photoURL: nil)
    }

    static func user(_ id: String = "u1", email: String? = "ann@corp.example", verified: Bool = false, links: [FederatedIdentity] = [])
        -> UserRecord
    {
        var user = UserRecord.blank(localID: id, now: t0)
        user.email = email
        user.emailVerified = verified
        user.federated = links
        user.password = PasswordCredential(stored: StoredPassword(algorithm: StoredPassword.argon2id, hash: [1]), updatedAt: t0)
        user.phoneNumber = "+15551234567"
        return user
    }

    static func config(_ provider: String, domains: [String]? = nil, hostedDomain: Bool = true) -> IdPConfig {
        var options = IdPOptions()
        options.trustedEmailDomains = domains
        options.trustHostedDomain = hostedDomain
        return IdPConfig(
            providerID: provider, enabled: true, clientID: "client", issuer: provider.hasPrefix("oidc.") ? "https://idp.corp.example" : nil,
            options: options, createdAt: t0, updatedAt: t0)
    }

    @Test("§A.7 trust: a verified address of a domain the provider proves; OIDC proves none by default, Google Gmail and its hd")
    func trust() {
        let corp = Self.assertion()
        #expect(!FederationTrust.trusted(corp, by: Self.config("oidc.corp")))
        #expect(FederationTrust.trusted(corp, by: Self.config("oidc.corp", domains: ["corp.example"])))
        #expect(FederationTrust.trusted(corp, by: Self.config("oidc.corp", domains: ["*"])))
        #expect(!FederationTrust.trusted(corp, by: Self.config("oidc.corp", domains: ["other.example"])))
        #expect(!FederationTrust.trusted(Self.assertion(verified: false), by: Self.config("oidc.corp", domains: ["*"])))
        #expect(!FederationTrust.trusted(Self.assertion(email: nil), by: Self.config("oidc.corp", domains: ["*"])))
        #expect(!FederationTrust.trusted(corp, by: nil))
        #expect(FederationTrust.trusted(corp, by: nil, insecureTestMode: true))

        let gmail = Self.assertion(email: "ann@gmail.com", provider: "google.com")
        #expect(FederationTrust.trusted(gmail, by: Self.config("google.com")))
        var workspace = Self.assertion(provider: "google.com")
        #expect(!FederationTrust.trusted(workspace, by: Self.config("google.com")))
        workspace.hostedDomain = "CORP.example"
        #expect(FederationTrust.trusted(workspace, by: Self.config("google.com")))
        #expect(!FederationTrust.trusted(workspace, by: Self.config("google.com", hostedDomain: false)))
        workspace.hostedDomain = "other.example"
        #expect(!FederationTrust.trusted(workspace, by: Self.config("google.com")))
        #expect(
            FederationTrust.trusted(
                Self.assertion(email: "x@privaterelay.appleid.com", provider: "apple.com"), by: Self.config("apple.com")))
    }

    @Test(
        "§A.8: a returning identity signs in; a trusted email links (stripping an unverified or recycled account); else confirm or create")
    func resolve() throws {
        let assertion = Self.assertion()
        let linked = Self.user("linked")
        #expect(
            try FederationRules.resolve(assertion, trusted: false, linked: linked, emailOwner: nil, autoCreate: true) == .signIn(linked))
        var disabled = linked
        disabled.disabled = true
        #expect(throws: AccountError(.userDisabled)) {
            try FederationRules.resolve(assertion, trusted: true, linked: disabled, emailOwner: nil, autoCreate: true)
        }

        let owner = Self.user("owner")
        #expect(
            try FederationRules.resolve(assertion, trusted: false, linked: nil, emailOwner: owner, autoCreate: true)
                == .needConfirmation(owner))
        let takeover = StripPlan(removePassword: true, revokeReason: .idpTakeoverProtection)
        #expect(
            try FederationRules.resolve(assertion, trusted: true, linked: nil, emailOwner: owner, autoCreate: true)
                == .link(owner, strip: takeover, emailRecycled: false))
        let verifiedOwner = Self.user("owner", verified: true)
        #expect(
            try FederationRules.resolve(assertion, trusted: true, linked: nil, emailOwner: verifiedOwner, autoCreate: true)
                == .link(verifiedOwner, strip: nil, emailRecycled: false))
        // Another identity of this provider had the mailbox: it changed hands, strip as if unverified.
        let recycled = Self.user(
            "owner", verified: true, links: [FederatedIdentity(providerID: "oidc.corp", rawID: "old-sub", linkedAt: Self.t0)])
        #expect(
            try FederationRules.resolve(assertion, trusted: true, linked: nil, emailOwner: recycled, autoCreate: true)
                == .link(recycled, strip: takeover, emailRecycled: true))

        #expect(try FederationRules.resolve(assertion, trusted: true, linked: nil, emailOwner: nil, autoCreate: true) == .create)
        #expect(throws: AccountError(.userNotFound)) {
            try FederationRules.resolve(assertion, trusted: true, linked: nil, emailOwner: nil, autoCreate: false)
        }
    }

    @Test("§A.9 link checks, in order: the provider already linked, the identity another's, the email another's")
    func checkLink() throws {
        let assertion = Self.assertion()
        let user = Self.user()
        try FederationRules.checkLink(assertion, user: user, identityOwner: nil, emailOwner: nil)
        try FederationRules.checkLink(assertion, user: user, identityOwner: "u1", emailOwner: "u1")
        let withProvider = Self.user(links: [FederatedIdentity(providerID: "oidc.corp", rawID: "other", linkedAt: Self.t0)])
        #expect(throws: AccountError(.providerAlreadyLinked)) {
            try FederationRules.checkLink(assertion, user: withProvider, identityOwner: "u2", emailOwner: "u2")
        }
        #expect(throws: AccountError(.federatedUserIDAlreadyLinked)) {
            try FederationRules.checkLink(assertion, user: user, identityOwner: "u2", emailOwner: "u2")
        }
        #expect(throws: AccountError(.emailExists)) {
            try FederationRules.checkLink(assertion, user: user, identityOwner: nil, emailOwner: "u2")
        }
    }

    @Test("what a link writes: by email after a strip it adopts the profile and proves the email; a signed-in link fills a missing email")
    func linkShapes() {
        let assertion = Self.assertion()
        var owner = Self.user(links: [FederatedIdentity(providerID: "google.com", rawID: "g", linkedAt: Self.t0)])
        owner.emailLinkSignin = true
        let strip = StripPlan(removePassword: true, revokeReason: .idpTakeoverProtection)
        let taken = FederationRules.linked(owner, assertion: assertion, strip: strip, now: Self.t0 + 5)
        #expect(taken.signinMethods == ["oidc.corp"] && taken.emailVerified && taken.phoneNumber == nil && taken.password == nil)
        #expect(taken.displayName == "Ann IdP" && taken.lastLoginAt == Self.t0 + 5 && taken.credentialVersion == 1)
        let kept = FederationRules.linked(owner, assertion: assertion, strip: nil, now: Self.t0 + 5)
        #expect(kept.signinMethods == ["password", "emailLink", "google.com", "oidc.corp"] && kept.credentialVersion == 0)

        let phoneOnly = Self.user(email: nil)
        let filled = FederationRules.linking(assertion, to: phoneOnly, trusted: false, now: Self.t0)
        #expect(filled.email == "ann@corp.example" && !filled.emailVerified && filled.federated.count == 1)
        #expect(FederationRules.linking(assertion, to: phoneOnly, trusted: true, now: Self.t0).emailVerified)
        let same = Self.user()
        #expect(!FederationRules.linking(assertion, to: same, trusted: false, now: Self.t0).emailVerified)
        #expect(FederationRules.linking(assertion, to: same, trusted: true, now: Self.t0).emailVerified)
        let other = Self.user(email: "other@example.com")
        let untouched = FederationRules.linking(assertion, to: other, trusted: true, now: Self.t0)
        #expect(untouched.email == "other@example.com" && !untouched.emailVerified)
        #expect(
            !FederationRules.linking(assertion, to: UserRecord.anonymousSignUp(localID: "a", now: Self.t0), trusted: false, now: Self.t0)
                .anonymous)
        #expect(
            owner.signedIn(now: Self.t0 + 9)
                == {
                    var u = owner; u.lastLoginAt = Self.t0 + 9; return u
                }())
    }

    @Test("decision 10: an account stores the assertion's verification only when the provider is trusted for it")
    func storedEmailVerified() {
        #expect(FederationRules.storedEmailVerified(Self.assertion(), trusted: true))
        #expect(!FederationRules.storedEmailVerified(Self.assertion(), trusted: false))
        #expect(!FederationRules.storedEmailVerified(Self.assertion(verified: false), trusted: true))
        #expect(!FederationRules.storedEmailVerified(Self.assertion(email: nil), trusted: true))
    }
}

/// The checks of an IdP's ID token that need no key (§A.4).
@Suite("ID-token rules (pure)")
struct IdPTokenRulesTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func segment(_ object: [String: JSONValue]) -> String {
        Base64URL.encode(Array(JSONValue.object(object).serialized().utf8))
    }

    static func token(header: [String: JSONValue] = ["alg": .string("RS256"), "kid": .string("k")], claims: [String: JSONValue]) -> String {
        "\(segment(header)).\(segment(claims)).\(Base64URL.encode([1, 2, 3]))"
    }

    static let claims: [String: JSONValue] = [
        "iss": .string("https://idp.corp.example"), "aud": .string("client"), "sub": .string("sub-1"), "iat": .int(1_700_000_000 - 10),
        "exp": .int(1_700_000_000 + 3600), "email": .string("Ann@Corp.Example"), "email_verified": .string("true"), "name": .string("Ann"),
        "tenant_role": .string("admin"),
    ]

    static let config = IdPConfig(
        providerID: "oidc.corp", enabled: true, clientID: "client", issuer: "https://idp.corp.example", createdAt: now, updatedAt: now)

    @Test("row 1: three base64url segments of JSON objects, at most 16 KiB; bare JSON only in the insecure test mode")
    func parse() throws {
        let jws = try IdPTokenRules.parse(Self.token(claims: Self.claims))
        #expect(jws.algorithm == "RS256" && jws.keyID == "k" && jws.signature == [1, 2, 3])
        #expect(jws.payload["sub"] == .string("sub-1"))
        for bad in ["", "a.b", "a.b.c.d", "!!.!!.!!", "\(Self.segment(["alg": .string("RS256")])).bm90IGpzb24.AQ"] {
            #expect(throws: IdPTokenRules.unparsable, "\(bad)") { try IdPTokenRules.parse(bad) }
        }
        let huge = Self.token(claims: ["pad": .string(String(repeating: "x", count: IdPTokenRules.maximumBytes))])
        #expect(throws: IdPTokenRules.unparsable) { try IdPTokenRules.parse(huge) }
        #expect(throws: IdPTokenRules.unparsable) { try IdPTokenRules.parse(#"{"sub":"x"}"#) }
        #expect(try IdPTokenRules.parse(#"{"sub":"x"}"#, allowBareJSON: true).payload["sub"] == .string("x"))
    }

    @Test("row 2: an allowed asymmetric algorithm, no crit, a signature")
    func header() throws {
        try IdPTokenRules.checkHeader(try IdPTokenRules.parse(Self.token(claims: Self.claims)))
        for header: [String: JSONValue] in [
            ["alg": .string("none")], ["alg": .string("HS256")], [:], ["alg": .string("RS256"), "crit": .array([.string("b64")])],
        ] {
            #expect(throws: IdPTokenRules.badSignature) {
                try IdPTokenRules.checkHeader(try IdPTokenRules.parse(Self.token(header: header, claims: Self.claims)))
            }
        }
        let unsigned = try IdPTokenRules.parse(Self.token(claims: Self.claims).split(separator: ".").prefix(2).joined(separator: ".") + ".")
        #expect(throws: IdPTokenRules.badSignature) { try IdPTokenRules.checkHeader(unsigned) }
    }

    @Test("rows 5–8: the configured issuer and audience (azp too), a live token not from the future, a subject")
    func claims() throws {
        func check(_ change: (inout [String: JSONValue]) -> Void) throws {
            var claims = Self.claims
            change(&claims)
            try IdPTokenRules.checkClaims(try IdPTokenRules.parse(Self.token(claims: claims)), config: Self.config, now: Self.now)
        }
        try check { _ in }
        try check { $0["aud"] = .array([.string("other"), .string("client")]) }
        try check { $0["iat"] = .int(1_700_000_000 + 60) }
        let refusals: [(String, (inout [String: JSONValue]) -> Void)] = [
            ("issuer", { $0["iss"] = .string("https://evil.example") }),
            ("audience", { $0["aud"] = .string("other") }),
            ("azp", { $0["azp"] = .string("other") }),
            ("future", { $0["iat"] = .int(1_700_000_000 + 61) }),
            ("expired", { $0["exp"] = .int(1_700_000_000) }),
            ("no iat", { $0["iat"] = nil }),
            (
                "exp before iat",
                {
                    $0["iat"] = .int(1_700_000_000 + 10); $0["exp"] = .int(1_700_000_000 + 5)
                }
            ),
            ("no sub", { $0["sub"] = nil }),
            ("empty sub", { $0["sub"] = .string("") }),
            ("long sub", { $0["sub"] = .string(String(repeating: "s", count: 256)) }),
        ]
        for (name, change) in refusals {
            let error = #expect(throws: AccountError.self, "\(name)") { try check(change) }
            #expect(error?.code == .invalidIDPResponse, "\(name)")
        }
    }

    @Test("row 9: a token's nonce needs the request's (but for google.com), and must be its SHA-256")
    func nonce() throws {
        #expect(try IdPTokenRules.nonce(of: Self.claims, requestNonce: nil, providerID: "oidc.corp") == nil)
        var claims = Self.claims
        claims["nonce"] = .string("hashed")
        #expect(throws: AccountError.self) { try IdPTokenRules.nonce(of: claims, requestNonce: nil, providerID: "oidc.corp") }
        #expect(throws: AccountError.self) { try IdPTokenRules.nonce(of: claims, requestNonce: "", providerID: "oidc.corp") }
        #expect(try IdPTokenRules.nonce(of: claims, requestNonce: nil, providerID: "google.com") == "hashed")
        #expect(try IdPTokenRules.nonce(of: claims, requestNonce: "raw", providerID: "oidc.corp") == "hashed")
        try IdPTokenRules.checkNonceHash("hashed", requestNonce: "raw", sha256Hex: { $0 == "raw" ? "hashed" : "" })
        #expect(throws: AccountError.self) { try IdPTokenRules.checkNonceHash("hashed", requestNonce: "other", sha256Hex: { _ in "x" }) }
    }

    @Test("the assertion: normalised email, verified as bool or string, profile; non-standard claims are the sign-in attributes")
    func assertion() throws {
        let assertion = IdPTokenRules.assertion(Self.claims, providerID: "oidc.corp")
        #expect(
            assertion.rawID == "sub-1" && assertion.email == "ann@corp.example" && assertion.emailVerified && assertion.displayName == "Ann"
        )
        #expect(try JSONValue.parse(assertion.signInAttributes ?? "").objectValue == ["tenant_role": .string("admin")])
        #expect(try JSONValue.parse(assertion.rawUserInfo).objectValue?["iss"] == .string("https://idp.corp.example"))
        var claims = Self.claims
        claims["email_verified"] = .string("yes")
        claims["tenant_role"] = nil
        claims["email"] = .string("not an address")
        let plain = IdPTokenRules.assertion(claims, providerID: "google.com")
        #expect(!plain.emailVerified && plain.email == nil && plain.signInAttributes == nil)
        let info = try JSONValue.parse(plain.rawUserInfo).objectValue
        #expect(info?["id"] == .string("sub-1") && info?["verified_email"] == .bool(false) && info?["email"] == nil)
    }
}
