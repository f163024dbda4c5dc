import AccountCore
import AccountTesting
import Foundation
import Testing

@Suite("Domain rules (pure)")
struct DomainRulesTests {
    @Test("§3.5: V is ⌊R⌋, or ⌊R⌋+1 when a token was minted earlier in that second; never decreases; mints never precede V")
    func validSince() {
        let r = Date(timeIntervalSince1970: 1_700_000_000.6)
        #expect(RevocationRules.validSince(revokedAt: r, lastMint: nil, previous: 0) == 1_700_000_000)
        #expect(
            RevocationRules.validSince(revokedAt: r, lastMint: Date(timeIntervalSince1970: 1_699_999_999.9), previous: 0) == 1_700_000_000)
        #expect(
            RevocationRules.validSince(revokedAt: r, lastMint: Date(timeIntervalSince1970: 1_700_000_000.2), previous: 0) == 1_700_000_001)
        #expect(RevocationRules.validSince(revokedAt: r, lastMint: nil, previous: 1_700_000_005) == 1_700_000_005)
        let mint = RevocationRules.mint(now: r, validSince: 1_700_000_001)
        #expect(mint.issuedAt == 1_700_000_001)
        #expect(mint.recordedAt == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(RevocationRules.mint(now: r, validSince: 1).issuedAt == 1_700_000_000)
    }

    @Test("the ASCII email path answers exactly as the Unicode one, on edge cases and on random input")
    func asciiEmailPath() {
        var cases = [
            "Alice@Example.COM", "a@b.c", "a@b", "a@b.", "a@.b", "a@b..c", "a@-b.c", "a@b-.c", "a@b-c.d", "a@1.2", "@b.c", "a@@b.c",
            "a b@c.d", "a\tb@c.d", "a\u{7F}@c.d", "a\u{1F}@c.d", "a_b+c@d.e", "a@b_c.d", "a@b.c\r\n", "\r\n@b.c", "A@B.C",
            String(repeating: "a", count: 64) + "@b.c", String(repeating: "a", count: 65) + "@b.c",
            "a@" + String(repeating: "b", count: 63) + ".c", "a@" + String(repeating: "b", count: 64) + ".c",
            "a@" + Array(repeating: String(repeating: "b", count: 50), count: 5).joined(separator: ".") + ".cc",
            String(repeating: "a", count: 60) + "@" + Array(repeating: String(repeating: "b", count: 60), count: 4).joined(separator: "."),
        ]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09-.@ _\t\u{7F}")
        for _ in 0..<2000 {
            cases.append(String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for raw in cases {
            #expect(EmailAddress.normalizeASCII(raw) == EmailAddress.normalizeUnicode(raw), "\(raw.debugDescription)")
        }
    }

    @Test("base64url: the byte-level coder answers as Foundation's string replacements do, on edge cases and random input")
    func base64URL() {
        // The reference (TestBase64URL) is the string-replacing implementation the byte-level one replaced.
        var generator = SystemRandomNumberGenerator()
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == TestBase64URL.encode(bytes))
            #expect(!encoded.contains("+") && !encoded.contains("/") && !encoded.contains("="))
            #expect(Base64URL.decode(encoded) == bytes)
            #expect(Base64URL.decode(Data(bytes).base64EncodedString()) == bytes, "standard alphabet, padded")
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        let inputs = TestBase64URL.inputs(
            edges: ["", "=", "a", "ab", "abc", "ab=c", "@@@@", "a b c d", "ab\ncd", "é", "aé==", "-_-_", "++//", "AAAA====", "AA==AA=="],
            alphabet: "AZaz09+/-_= é.", count: 2000, maxLength: 9)
        for text in inputs {
            #expect(Base64URL.decode(text) == TestBase64URL.decode(text), "\(text.debugDescription)")
        }
    }

    @Test("a session id is 16 random bytes in base64url and never starts with \"-\" (accountctl would read an option)")
    func sessionIDs() throws {
        struct Constant: RandomSource {
            let byte: UInt8
            func bytes(_ count: Int) -> [UInt8] { Array(repeating: byte, count: count) }
        }
        for byte in [UInt8(0xF8), 0xF9, 0xFA, 0xFB, 0x00, 0xFF] {
            let session = NewSession(
                random: Constant(byte: byte), keyID: "k", provider: "password", method: "password", userAgent: nil, ipAddress: nil)
            #expect(!session.sessionID.hasPrefix("-"), "\(byte)")
            #expect(try #require(Base64URL.decode(session.sessionID)).count == 16)
        }
        for _ in 0..<2000 {
            let session = NewSession(
                random: SystemRandom(), keyID: "k", provider: "password", method: "password", userAgent: nil, ipAddress: nil)
            #expect(!session.sessionID.hasPrefix("-"))
            #expect(session.sessionID.count == 22)
        }
    }

    @Test("§1.5: emails, phones, ids")
    func primitives() {
        #expect(EmailAddress.normalize("Alice@Example.COM") == "alice@example.com")
        for bad in [
            "", "x", "a@b", "a b@example.com", "@example.com", "a@-example.com", String(repeating: "a", count: 65) + "@example.com",
        ] {
            #expect(EmailAddress.normalize(bad) == nil, "\(bad)")
        }
        #expect(EmailAddress.normalize("josé@exämple.de") == "josé@exämple.de")
        #expect(EmailAddress.normalize("JOSÉ@Exämple.DE") == "josé@exämple.de")
        #expect(PhoneNumber.isCanonical("+15551234567"))
        #expect(!PhoneNumber.isCanonical("+0"))
        #expect(!PhoneNumber.isCanonical("15551234567"))
        #expect(LocalID.generate(SystemRandom()).count == 28)
        #expect(!LocalID.isValid("has space"))
        #expect(throws: AccountError(.weakPassword, "Password should be at least 6 characters")) {
            try PasswordPolicy.firebase.check("12345")
        }
    }

    @Test("§4.3 step 5: ActionCodeSettings faults in the reference's order; authorized domains at label boundaries")
    func actionCodeSettings() {
        let project = ProjectSettings(projectID: "p")
        let domains = ["localhost", "example.com", "10.0.0.1"]
        #expect(ProjectSettings.isAuthorized(host: "app.example.com", in: domains))
        #expect(!ProjectSettings.isAuthorized(host: "badexample.com", in: domains))
        #expect(ProjectSettings.isAuthorized(host: "10.0.0.1", in: domains))
        #expect(!ProjectSettings.isAuthorized(host: "1.10.0.0.1", in: domains))
        var settings = ActionCodeSettings()
        settings.continueURL = "https://evil.net/x"
        settings.androidInstallApp = true
        #expect(throws: AccountError(.unauthorizedDomain, "Domain not allowlisted by project")) {
            try settings.validate(kind: .passwordReset, project: project, domains: domains)
        }
        settings.continueURL = "https://example.com/x"
        #expect(throws: AccountError(.missingAndroidPackageName)) {
            try settings.validate(kind: .passwordReset, project: project, domains: domains)
        }
        settings.continueURL = nil
        #expect(throws: AccountError(.missingContinueURI)) {
            try settings.validate(kind: .passwordReset, project: project, domains: domains)
        }
        #expect(throws: AccountError(.missingContinueURI)) {
            try ActionCodeSettings().validate(kind: .emailSignIn, project: project, domains: domains)
        }
        #expect(throws: AccountError(.invalidContinueURI)) {
            var s = ActionCodeSettings()
            s.continueURL = "ftp://example.com"
            try s.validate(kind: .verifyEmail, project: project, domains: domains)
        }
    }

    @Test("§3.1: claims rebuilt from the account; the account's own values win over custom claims")
    func claims() {
        var user = UserRecord(localID: "u1", email: "a@example.com", createdAt: Date(), validSince: 0, tokensValidAfter: Date())
        user.customAttributes = #"{"role":"x","email":"forged@example.com"}"#
        let claims = IDTokenClaims.make(
            user: user, sessionID: "s1", signInProvider: "password", ticket: MintTicket(issuedAt: 100, authTime: 90),
            settings: ProjectSettings(projectID: "p")
        )
        #expect(claims["email"] == .string("a@example.com"))
        #expect(claims["role"] == .string("x"))
        #expect(claims["exp"] == .int(3700))
        #expect(claims["auth_time"] == .int(90))
        #expect(claims["iss"] == .string("https://securetoken.google.com/p"))
        #expect(claims["firebase"]?.objectValue?["sign_in_provider"] == .string("password"))
    }
}

@Suite("Refresh rules (pure)")
struct RefreshRulesTests {
    let now = Date(timeIntervalSince1970: 1_700_000_100)
    let user = UserRecord(localID: "u1", createdAt: Date(timeIntervalSince1970: 1_700_000_000), validSince: 0, tokensValidAfter: Date())

    /// A live session at generation 5, rotated `age` seconds before `now`.
    func session(age: TimeInterval = 3) -> SessionRecord {
        SessionRecord(
            sessionID: "s1", localID: "u1", createdAt: Date(timeIntervalSince1970: 1_700_000_000), authTime: 1_700_000_000,
            signInProvider: "password", signInMethod: "password", generation: 5, generationIssuedAt: now - age, salt: [1],
            keyID: "k1")
    }

    func decide(_ presented: Int64, session: SessionRecord?, user: UserRecord?, macValid: Bool = true) throws(AccountError)
        -> RefreshDecision
    {
        try RefreshRules.decide(presented: presented, macValid: macValid, session: session, user: user, now: now, graceSeconds: 10)
    }

    func refusal(_ body: () throws(AccountError) -> RefreshDecision) -> AccountError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.code
        }
    }

    @Test(
        "§3.3: the current token rotates; the previous one within the grace window is tolerated, after it is reuse; older generations are reuse; a later one (a rotation the database lost) rotates"
    )
    func generations() throws {
        #expect(try decide(5, session: session(), user: user) == .rotate)
        #expect(try decide(4, session: session(age: 3), user: user) == .tolerate)
        #expect(try decide(4, session: session(age: 10), user: user) == .tolerate)
        #expect(try decide(4, session: session(age: 10.001), user: user) == .reuse)
        #expect(try decide(3, session: session(age: 0), user: user) == .reuse)
        #expect(try decide(6, session: session(), user: user) == .rotate)
        #expect(try decide(9, session: session(age: 100), user: user) == .rotate)
        #expect(try decide(.max, session: session(), user: user) == .reuse)
        // Its MAC is what makes a later generation the server's own: one that fails it rotates nothing.
        #expect(
            refusal { () throws(AccountError) in try decide(6, session: session(), user: user, macValid: false) } == .invalidRefreshToken)
    }

    @Test("§4.17: refusals in Firebase's order, before any generation rule")
    func refusals() {
        var disabled = user
        disabled.disabled = true
        var revoked = session()
        revoked.revokedAt = now - 1
        var expired = session()
        expired.expiresAt = now
        var tombstone = session()
        tombstone.userDeleted = true
        #expect(refusal { () throws(AccountError) in try decide(5, session: nil, user: user) } == .invalidRefreshToken)
        #expect(
            refusal { () throws(AccountError) in try decide(5, session: session(), user: user, macValid: false) } == .invalidRefreshToken)
        #expect(refusal { () throws(AccountError) in try decide(5, session: session(), user: nil) } == .userNotFound)
        #expect(refusal { () throws(AccountError) in try decide(5, session: tombstone, user: user) } == .userNotFound)
        // A disabled owner is named before the session's own state, and before reuse.
        #expect(refusal { () throws(AccountError) in try decide(5, session: revoked, user: disabled) } == .userDisabled)
        #expect(refusal { () throws(AccountError) in try decide(1, session: session(), user: disabled) } == .userDisabled)
        #expect(refusal { () throws(AccountError) in try decide(5, session: revoked, user: user) } == .tokenExpired)
        #expect(refusal { () throws(AccountError) in try decide(5, session: expired, user: user) } == .tokenExpired)
        // A revoked session does not turn an old token into reuse again.
        #expect(refusal { () throws(AccountError) in try decide(1, session: revoked, user: user) } == .tokenExpired)
    }
}

@Suite("Takeover rule (pure)")
struct TakeoverRulesTests {
    @Test(
        "§4.4: a proven mailbox strips an unverified account: the password unless a reset replaces it, links, phone, codes but sign-in links; sessions revoked"
    )
    func stripPlan() throws {
        var user = UserRecord(localID: "u1", email: "a@example.com", createdAt: Date(), validSince: 0, tokensValidAfter: Date())
        let link = try #require(TakeoverRules.plan(for: user, proof: .emailLink))
        #expect(link.removePassword)
        #expect(StripPlan.keptCodeKinds == [.emailSignIn])
        #expect(link.revokeReason == .emailLinkTakeoverProtection)
        let reset = try #require(TakeoverRules.plan(for: user, proof: .passwordReset))
        #expect(!reset.removePassword)
        #expect(reset.revokeReason == .passwordReset)
        // A verified email had nothing attached while unproven.
        user.emailVerified = true
        #expect(TakeoverRules.plan(for: user, proof: .emailLink) == nil)
        #expect(TakeoverRules.plan(for: user, proof: .passwordReset) == nil)
    }
}

@Suite("Update revocation rules (pure)")
struct UpdateRevocationTests {
    @Test("§4.7 B: a change's revoke reason, in order: password, email, disabling, validSince; none for profile fields")
    func revokeReason() {
        var user = UserRecord(localID: "u1", email: "a@example.com", createdAt: Date(), validSince: 0, tokensValidAfter: Date())
        var change = UserChange()
        change.displayName = .set("Alice")
        #expect(change.revokeReason(for: user) == nil)
        #expect(!change.changesTokenState)
        change.revokeAll = true
        #expect(change.revokeReason(for: user) == .allSessionsRevoked)
        change.disabled = true
        #expect(change.revokeReason(for: user) == .userDisabled)
        #expect(change.changesTokenState)
        // Disabling an account already disabled revokes nothing new; the explicit validSince still does.
        user.disabled = true
        #expect(change.revokeReason(for: user) == .allSessionsRevoked)
        change.email = .set("b@example.com")
        #expect(change.revokeReason(for: user) == .emailChanged)
        change.password = StoredPassword(algorithm: StoredPassword.argon2id, hash: [1])
        #expect(change.revokeReason(for: user) == .passwordChanged)
        var claims = UserChange()
        claims.customAttributes = .set(#"{"admin":true}"#)
        #expect(claims.revokeReason(for: user) == nil && claims.changesTokenState)
    }
}

@Suite("Email-link rules (pure)")
struct EmailLinkRulesTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let user = UserRecord(localID: "u1", email: "a@example.com", createdAt: Date(), validSince: 100, tokensValidAfter: Date())

    func code(email: String = "a@example.com", kind: ActionCodeKind = .emailSignIn, expiresIn: TimeInterval = 60, used: Bool = false)
        -> ActionCodeRecord
    {
        ActionCodeRecord(
            kind: kind, localID: nil, email: email, newEmail: nil, lang: "en", expiresAt: now + expiresIn, usedAt: used ? now : nil)
    }

    func refusal(_ body: () throws(AccountError) -> Void) -> AccountError.Code? {
        do {
            try body()
            return nil
        } catch {
            return error.code
        }
    }

    @Test("§4.3: only a live, unspent sign-in link completes, and only with the address it was sent to")
    func accept() {
        #expect(refusal { () throws(AccountError) in try EmailLinkRules.accept(code(), email: "a@example.com", now: now) } == nil)
        #expect(refusal { () throws(AccountError) in try EmailLinkRules.accept(nil, email: "a@example.com", now: now) } == .invalidOOBCode)
        #expect(
            refusal { () throws(AccountError) in try EmailLinkRules.accept(code(used: true), email: "a@example.com", now: now) }
                == .invalidOOBCode)
        #expect(
            refusal { () throws(AccountError) in try EmailLinkRules.accept(code(kind: .passwordReset), email: "a@example.com", now: now) }
                == .invalidOOBCode)
        #expect(
            refusal { () throws(AccountError) in try EmailLinkRules.accept(code(expiresIn: -1), email: "a@example.com", now: now) }
                == .expiredOOBCode)
        #expect(
            refusal { () throws(AccountError) in try EmailLinkRules.accept(code(), email: "b@example.com", now: now) } == .invalidEmail)
    }

    @Test("§4.4: signing in strips an unverified account (THE RULE), not a verified one, refuses a disabled one, creates a missing one")
    func signIn() throws {
        var unverified = user
        let strip = try #require(TakeoverRules.plan(for: unverified, proof: .emailLink))
        #expect(try EmailLinkRules.signIn(existing: unverified) == .signIn(unverified, strip: strip))
        #expect(strip.removePassword && strip.revokeReason == .emailLinkTakeoverProtection)
        unverified.emailVerified = true
        #expect(try EmailLinkRules.signIn(existing: unverified) == .signIn(unverified, strip: nil))
        #expect(try EmailLinkRules.signIn(existing: nil) == .create)
        unverified.disabled = true
        #expect(refusal { () throws(AccountError) in _ = try EmailLinkRules.signIn(existing: unverified) } == .userDisabled)
    }

    @Test("Linking: address taken, user gone, session revoked or older than validSince, user disabled — in that order; never a strip")
    func link() throws {
        let fresh = SessionGuard(sessionID: "s1", issuedAt: 100)
        func plan(owner: String? = nil, user: UserRecord?, session: SessionGuard = fresh, live: Bool = true) throws(AccountError)
            -> EmailLinkPlan
        {
            try EmailLinkRules.link(email: "b@example.com", owner: owner, user: user, session: session, sessionLive: live)
        }
        #expect(try plan(user: user) == .link(user, replacedEmail: "a@example.com"))
        #expect(try plan(owner: "u1", user: user) == .link(user, replacedEmail: "a@example.com"))
        var same = user
        same.email = "b@example.com"
        #expect(try plan(user: same) == .link(same, replacedEmail: nil))
        var disabled = user
        disabled.disabled = true
        #expect(refusal { () throws(AccountError) in _ = try plan(owner: "u2", user: nil, live: false) } == .emailExists)
        #expect(refusal { () throws(AccountError) in _ = try plan(user: nil, live: false) } == .userNotFound)
        #expect(refusal { () throws(AccountError) in _ = try plan(user: disabled, live: false) } == .tokenExpired)
        #expect(
            refusal { () throws(AccountError) in _ = try plan(user: disabled, session: SessionGuard(sessionID: "s1", issuedAt: 99)) }
                == .tokenExpired)
        #expect(refusal { () throws(AccountError) in _ = try plan(user: disabled) } == .userDisabled)
    }
}

@Suite("Abuse-limit rules (pure)")
struct AbuseLimitRulesTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test("§E.4: the lock starts at the threshold, doubles from 30 s to the 15 min cap; the unknown network's hard limit locks for good")
    func lockout() {
        let policy = LockoutPolicy()
        func seconds(_ failures: Int, _ network: NetworkClass) -> TimeInterval? {
            LockoutRules.lockedUntil(failures: failures, network: network, now: now, policy: policy)?.timeIntervalSince(now)
        }
        #expect(seconds(4, .unknown) == nil)
        #expect(seconds(5, .unknown) == 30 && seconds(6, .unknown) == 60 && seconds(9, .unknown) == 480)
        #expect(seconds(10, .unknown) == 900 && seconds(60, .unknown) == 900)
        #expect(seconds(9, .known) == nil && seconds(10, .known) == 30)
        #expect(LockoutRules.lockedUntil(failures: 100, network: .unknown, now: now, policy: policy) == .distantFuture)
        #expect(seconds(100, .known) == 900, "the known network has no hard limit")
        #expect(LockoutRules.retryAfter(until: now + 0.2, now: now) == 1 && LockoutRules.retryAfter(until: now + 29.5, now: now) == 30)
        // The database's microseconds do not add a second.
        #expect(LockoutRules.retryAfter(until: now + 30.0000004, now: now) == 30)
        #expect(LockoutRules.retryAfter(until: now + 30.01, now: now) == 31)
    }

    @Test("§E.5: bucket sizes parse as <burst>/<period>; an address counts by IPv4 address or IPv6 /64")
    func buckets() {
        #expect(RateBucket.parse("5/1h") == RateBucket(burst: 5, period: 3600))
        #expect(RateBucket.parse("20/3m") == RateBucket(burst: 20, period: 180))
        #expect(RateBucket.parse("2/1d")?.tolerance == 86400)
        #expect(RateBucket.parse("60/30") == RateBucket(burst: 60, period: 30))
        #expect(RateBucket.parse("x/1h") == nil && RateBucket.parse("5") == nil && RateBucket.parse("5/0s") == nil)
        #expect(AbuseLimiter.networkKey("203.0.113.9") == "203.0.113.9")
        #expect(AbuseLimiter.networkKey("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(AbuseLimiter.networkKey("2001:db8:1:2::9") == AbuseLimiter.networkKey("2001:0db8:0001:0002:ffff::1"))
        #expect(AbuseLimiter.networkKey("::1") == "0:0:0:0::/64")
    }
}

@Suite("Custom-token rules (pure)")
struct CustomTokenRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// An unsigned-shaped token (the rules below the signature do not look at it) with `payload`.
    static func token(_ payload: [String: JSONValue], header: [String: JSONValue] = ["alg": .string("RS256")], signature: String = "c2ln")
        -> String
    {
        func segment(_ object: [String: JSONValue]) -> String { Base64URL.encode(Array(JSONValue.object(object).serialized().utf8)) }
        return segment(header) + "." + segment(payload) + "." + signature
    }

    static func payload(iat: Int64 = 1_800_000_000, exp: Int64 = 1_800_003_600, uid: JSONValue? = .string("u1")) -> [String: JSONValue] {
        var payload: [String: JSONValue] = [
            "aud": .string(CustomTokenRules.audience), "iss": .string("sa@x"), "sub": .string("sa@x"), "iat": .int(iat), "exp": .int(exp),
        ]
        payload["uid"] = uid
        return payload
    }

    func grant(_ payload: [String: JSONValue]) throws -> CustomTokenGrant {
        try CustomTokenRules.grant(try CustomTokenRules.parse(Self.token(payload), acceptUnsigned: false), now: Self.now)
    }

    @Test("steps 1–6 in order: presence, shape, JSON, audience, algorithm, signature")
    func parse() {
        #expect(throws: AccountError(.missingCustomToken)) { try CustomTokenRules.parse("", acceptUnsigned: false) }
        #expect(throws: AccountError(.invalidCustomToken, "Invalid assertion format. 3 dot separated segments required.")) {
            try CustomTokenRules.parse("a.b", acceptUnsigned: false)
        }
        #expect(throws: AccountError(.invalidCustomToken, "Invalid assertion format. 3 dot separated segments required.")) {
            try CustomTokenRules.parse(Self.token(Self.payload(), signature: String(repeating: "A", count: 9000)), acceptUnsigned: false)
        }
        // A wrong audience is named before a wrong algorithm.
        var wrongAudience = Self.payload()
        wrongAudience["aud"] = .string("demo-x")
        #expect(throws: AccountError.self) {
            try CustomTokenRules.parse(Self.token(wrongAudience, header: ["alg": .string("HS256")]), acceptUnsigned: false)
        }
        do {
            _ = try CustomTokenRules.parse(Self.token(wrongAudience, header: ["alg": .string("HS256")]), acceptUnsigned: false)
        } catch {
            #expect(error.detail?.hasPrefix("Invalid aud (audience): demo-x.") == true)
        }
        let unsigned = Self.token(Self.payload(), header: ["alg": .string("none")], signature: "")
        #expect(throws: AccountError(.invalidCustomToken)) { try CustomTokenRules.parse(unsigned, acceptUnsigned: false) }
        #expect((try? CustomTokenRules.parse(unsigned, acceptUnsigned: true))?.isUnsigned == true)
        #expect(throws: AccountError(.invalidCustomToken, "Missing signature.")) {
            try CustomTokenRules.parse(Self.token(Self.payload(), signature: ""), acceptUnsigned: true)
        }
    }

    @Test("step 8's window at its edges: iat up to 300 s ahead, exp after now, at most an hour between")
    func window() throws {
        let expired = AccountError(.invalidCustomToken, "Token expired, or issued too far in the future.")
        #expect(try grant(Self.payload(iat: 1_800_000_300, exp: 1_800_003_600)).localID == "u1")
        #expect(throws: expired) { try grant(Self.payload(iat: 1_800_000_301, exp: 1_800_003_600)) }
        #expect(throws: expired) { try grant(Self.payload(iat: 1_799_996_400, exp: 1_800_000_000)) }
        #expect(try grant(Self.payload(iat: 1_799_996_401, exp: 1_800_000_001)).replayUntil == Date(timeIntervalSince1970: 1_800_000_301))
        #expect(throws: expired) { try grant(Self.payload(iat: 1_800_000_000, exp: 1_800_003_601)) }
    }

    @Test("steps 9–12: tenant, uid, claims")
    func identity() throws {
        var tenant = Self.payload()
        tenant["tenant_id"] = .string("t")
        #expect(throws: AccountError(.tenantIDMismatch)) { try grant(tenant) }
        tenant["tenant_id"] = .string("")
        #expect(try grant(tenant).localID == "u1")
        #expect(throws: AccountError(.missingIdentifier)) { try grant(Self.payload(uid: nil)) }
        let badUID = AccountError(.invalidCustomToken, "uid must be 1-128 printable ASCII characters.")
        for uid: JSONValue in [.string(""), .string("has space"), .string(String(repeating: "x", count: 129)), .string("é"), .int(7)] {
            #expect(throws: badUID) { try grant(Self.payload(uid: uid)) }
        }
        #expect(try grant(Self.payload(uid: .string(String(repeating: "x", count: 128)))).localID.count == 128)
        var claims = Self.payload()
        claims["claims"] = .object(["role": .string("admin"), "level": .int(3)])
        let overlay = try #require(try grant(claims).claimsOverlay)
        #expect(try JSONValue.parse(overlay) == claims["claims"])
        claims["claims"] = .object(["sid": .string("x")])
        #expect(throws: AccountError(.forbiddenClaim, "sid")) { try grant(claims) }
        claims["claims"] = .array([])
        #expect(throws: AccountError(.invalidClaims)) { try grant(claims) }
        claims["claims"] = .object([:])
        #expect(try grant(claims).claimsOverlay == nil)
    }
}
