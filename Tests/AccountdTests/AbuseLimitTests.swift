import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

@testable import accountd

/// federation-and-limits.md §E.7, checklist L1–L12, over real HTTP against PostgreSQL, with a
/// production configuration (limits on by default). Every request names its client address through
/// a trusted proxy (the loopback peer), so one test speaks from several networks.
@Suite("Abuse limits (checklist E.7)")
struct AbuseLimitTests {
    static let lockedText = "TOO_MANY_ATTEMPTS_TRY_LATER : " + AbuseLimiter.lockedText
    static let home = "198.51.100.7"
    static let attacker = "203.0.113.9"

    static func configuration(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var configuration = productionConfiguration()
        configuration.abuseLimits = AbuseLimitSettings(enabled: true)
        configuration.listen.trustedProxies = [IPNetwork("127.0.0.1")!]
        configuration.accounts.allowAnonymous = true
        change(&configuration)
        return configuration
    }

    /// A client RPC from `address`.
    static func call(_ http: TestHTTPClient, _ rpc: String, _ body: [String: any Sendable], from address: String) async throws
        -> TestHTTPClient.Reply
    {
        try await http.post("/v1/accounts:\(rpc)?key=\(API.key)", body, headers: [("X-Forwarded-For", address)])
    }

    static func signIn(_ http: TestHTTPClient, _ email: String, _ password: String, from address: String) async throws
        -> TestHTTPClient.Reply
    {
        try await call(http, "signInWithPassword", ["email": email, "password": password, "returnSecureToken": true], from: address)
    }

    static func failures(_ database: DatabaseURL) async throws -> [String] {
        try await TestDatabase.withClient(database) { client in
            var rows: [String] = []
            for (key, network, count, until) in try await client.query(
                "SELECT encode(key, 'hex'), class, failures, locked_until::text FROM password_failures ORDER BY 1, 2"
            ).decode((String, String, Int32, String?).self) {
                rows.append("\(key) \(network) \(count) \(until ?? "-")")
            }
            return rows
        }
    }

    @Test("L1 L2 L4: five wrong passwords lock the unknown network (30 s, then 60 s); home and refreshes are untouched")
    func lockout() async throws {
        let database = try await TestDatabase.createMigrated()
        let clock = ManualClock()
        try await withServer(Self.configuration(), database: database, clock: clock) { http in
            let signUp = try await Self.call(
                http, "signUp", ["email": "u@example.com", "password": "right-pass", "returnSecureToken": true], from: Self.home)
            #expect(signUp.status == 200)
            for attempt in 1...5 {
                let wrong = try await Self.signIn(http, "u@example.com", "wrong-pass", from: Self.attacker)
                #expect(wrong.errorCode == "INVALID_PASSWORD", "attempt \(attempt) answers its own error")
            }
            let locked = try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker)
            #expect(locked.status == 400 && locked.errorMessage == Self.lockedText)
            #expect(locked.header("Retry-After") == "30")

            // L2: the home network, where U's session lives, is a different class.
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.home).status == 200)

            // L4: a refresh neither reads nor writes the lockout.
            let before = try await Self.failures(database)
            let refreshed = try await API(http: http).refresh(Session(signUp).refreshToken)
            #expect(refreshed.status == 200)
            #expect(try await Self.failures(database) == before)

            clock.advance(30)
            #expect(try await Self.signIn(http, "u@example.com", "wrong-pass", from: Self.attacker).errorCode == "INVALID_PASSWORD")
            let longer = try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker)
            #expect(longer.errorMessage == Self.lockedText && longer.header("Retry-After") == "60")
        }
    }

    @Test("§E.4 step 5: a success clears the failures of its own network only; the attacker's count goes on")
    func successClearsItsOwnClass() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            _ = try await Self.call(http, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
            for _ in 1...3 { _ = try await Self.signIn(http, "u@example.com", "typo", from: Self.home) }
            for _ in 1...3 { _ = try await Self.signIn(http, "u@example.com", "guess", from: Self.attacker) }
            #expect(try await Self.failures(database).count == 2, "a row per network class")
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.home).status == 200)
            let rows = try await Self.failures(database)
            #expect(rows.count == 1 && rows[0].contains(" unknown 3 "), "home's count is gone, the attacker's stays: \(rows)")
            for _ in 1...2 { _ = try await Self.signIn(http, "u@example.com", "guess", from: Self.attacker) }
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker).errorMessage == Self.lockedText)
        }
    }

    @Test("L3: a locked account still completes an email link and a reset; the reset clears both classes")
    func lockNeverBlocksRecovery() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: "acme-prod")
            _ = try await Self.call(http, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
            for _ in 1...10 { _ = try await Self.signIn(http, "u@example.com", "wrong-pass", from: Self.home) }
            for _ in 1...5 { _ = try await Self.signIn(http, "u@example.com", "wrong-pass", from: Self.attacker) }
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.home).errorMessage == Self.lockedText)
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker).errorMessage == Self.lockedText)

            let link = try await EmailActionsTests.signInCode(api, "u@example.com")
            let completed = try await Self.call(
                http, "signInWithEmailLink", ["email": "u@example.com", "oobCode": link], from: Self.attacker)
            #expect(completed.status == 200, "an email link is never locked out")

            let reset = try await api.admin(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "u@example.com", "returnOobLink": true])
            let code = try #require(reset.string("oobCode"))
            let done = try await Self.call(http, "resetPassword", ["oobCode": code, "newPassword": "new-pass-1"], from: Self.attacker)
            #expect(done.status == 200)
            #expect(try await Self.failures(database).isEmpty, "the reset cleared both classes")
            #expect(try await Self.signIn(http, "u@example.com", "new-pass-1", from: Self.attacker).status == 200)
            #expect(try await Self.signIn(http, "u@example.com", "new-pass-1", from: Self.home).status == 200)
        }
    }

    @Test("L5: an unknown email locks the same way (no enumeration); an admin unlock clears it and is audited")
    func unknownEmailAndUnlock() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            for _ in 1...5 { _ = try await Self.signIn(http, "nobody@example.com", "guess", from: Self.attacker) }
            let sixth = try await Self.signIn(http, "nobody@example.com", "guess", from: Self.attacker)
            #expect(sixth.errorMessage == Self.lockedText && sixth.header("Retry-After") == "30")

            let api = API(http: http, project: "acme-prod")
            let unlock = try await api.admin("unlock", ["email": "Nobody@Example.com"])
            #expect(unlock.status == 200 && unlock.json["cleared"] as? Bool == true && unlock.string("email") == "nobody@example.com")
            #expect(try await Self.signIn(http, "nobody@example.com", "guess", from: Self.attacker).errorCode == "EMAIL_NOT_FOUND")
            let audit = try await api.admin("listAuditEvents", [:])
            let actions = (audit.json["events"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions.contains("ACCOUNT_LOCKED") && actions.contains("ACCOUNT_UNLOCKED"))
            // Keys are HMACs: the address appears in no form.
            for _ in 1...2 { _ = try await Self.signIn(http, "nobody@example.com", "guess", from: Self.attacker) }
            let plain = Data("nobody@example.com".utf8).map { String(format: "%02x", $0) }.joined()
            let rows = try await Self.failures(database)
            #expect(!rows.isEmpty && rows.allSatisfy { !$0.contains(plain) })
        }
    }

    @Test("L6: failures alternating between two replicas lock at the same count")
    func replicasShareOneBudget() async throws {
        let database = try await TestDatabase.createMigrated()
        let clock = ManualClock()
        try await withServer(Self.configuration(), database: database, clock: clock) { httpA in
            try await withServer(Self.configuration(), database: database, clock: clock) { httpB in
                _ = try await Self.call(httpA, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
                for attempt in 1...5 {
                    let http = attempt % 2 == 0 ? httpA : httpB
                    #expect(try await Self.signIn(http, "u@example.com", "wrong", from: Self.attacker).errorCode == "INVALID_PASSWORD")
                }
                #expect(try await Self.signIn(httpA, "u@example.com", "right-pass", from: Self.attacker).errorMessage == Self.lockedText)
                #expect(try await Self.signIn(httpB, "u@example.com", "right-pass", from: Self.attacker).errorMessage == Self.lockedText)
            }
        }
    }

    @Test("L7: 60 failures over many accounts from one address; the 61st, right or wrong, is refused by the address's bucket")
    func addressBucket() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            _ = try await Self.call(http, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
            for index in 1...60 {
                let reply = try await Self.signIn(http, "victim\(index)@example.com", "guess", from: Self.attacker)
                #expect(reply.errorCode == "EMAIL_NOT_FOUND", "attempt \(index)")
            }
            let refused = try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker)
            #expect(refused.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many unsuccessful login attempts. Please try again later.")
            #expect(refused.header("Retry-After") == "30")
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.home).status == 200, "other addresses are not")
        }
    }

    @Test("L8: a second reset mail to one address within 60 s is RESET_PASSWORD_EXCEED_LIMIT, the same for an unknown address")
    func mailSpacing() async throws {
        let database = try await TestDatabase.createMigrated()
        let configuration = Self.configuration { $0.accounts.emailEnumerationProtection = true }
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            _ = try await Self.call(http, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
            var answers: [String: [String]] = [:]
            for email in ["u@example.com", "ghost@example.com"] {
                for _ in 1...2 {
                    let reply = try await Self.call(
                        http, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email], from: Self.home)
                    answers[email, default: []].append("\(reply.status) \(reply.errorMessage ?? "ok")")
                }
            }
            #expect(answers["u@example.com"] == ["200 ok", "400 RESET_PASSWORD_EXCEED_LIMIT"])
            #expect(answers["ghost@example.com"] == answers["u@example.com"], "no enumeration")
        }
    }

    @Test("L9: the project's daily sign-in mail quota refuses the third mail with QUOTA_EXCEEDED, nothing queued")
    func projectQuota() async throws {
        let database = try await TestDatabase.createMigrated()
        let configuration = Self.configuration { $0.abuseLimits.mailQuotas[.emailSignIn] = RateBucket.parse("2/1d") }
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            var codes: [String] = []
            for index in 1...3 {
                var body = EmailActionsTests.signIn
                body["email"] = "person\(index)@example.com"
                let reply = try await Self.call(http, "sendOobCode", body, from: "192.0.2.\(index)")
                codes.append(reply.errorMessage ?? "ok")
            }
            #expect(codes == ["ok", "ok", "QUOTA_EXCEEDED : Exceeded daily quota for sign-in emails."])
            #expect(try await EmailActionsTests.outboxCount(database) == 2)
        }
    }

    @Test("L10: the 101st anonymous sign-up from one address within the hour is refused; another address is not")
    func accountCreations() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            for index in 1...100 {
                #expect(try await Self.call(http, "signUp", [:], from: Self.attacker).status == 200, "sign-up \(index)")
            }
            let refused = try await Self.call(http, "signUp", [:], from: Self.attacker)
            #expect(
                refused.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many accounts created from this network. Please try again later."
            )
            #expect(try await Self.call(http, "signUp", [:], from: Self.home).status == 200)
        }
    }

    @Test("L11: a demo- project without ACCOUNTD_ABUSE_LIMITS limits nothing; the switch turns it on, and off for production")
    func demoDefault() async throws {
        func limits(_ environment: [String: String]) throws -> Bool {
            try Configuration(ConfigurationInput().merged(withEnvironment: environment)).abuseLimits.enabled
        }
        #expect(try !limits(["ACCOUNTD_PROJECT_ID": "demo-x"]))
        #expect(try limits(["ACCOUNTD_PROJECT_ID": "demo-x", "ACCOUNTD_ABUSE_LIMITS": "on"]))
        let database = try await TestDatabase.createMigrated()
        var configuration = testConfiguration()
        configuration.listen.trustedProxies = [IPNetwork("127.0.0.1")!]
        try await withServer(configuration, database: database) { http in
            _ = try await Self.call(http, "signUp", ["email": "u@example.com", "password": "right-pass"], from: Self.home)
            for _ in 1...8 { _ = try await Self.signIn(http, "u@example.com", "wrong", from: Self.attacker) }
            #expect(try await Self.signIn(http, "u@example.com", "right-pass", from: Self.attacker).status == 200)
            #expect(try await Self.failures(database).isEmpty)
        }
    }

    @Test("L12: X-Forwarded-For from an untrusted peer is ignored: the peer's address is the key")
    func untrustedForwardedFor() async throws {
        let database = try await TestDatabase.createMigrated()
        let configuration = Self.configuration {
            $0.listen.trustedProxies = []
            $0.abuseLimits.buckets[.passwordFailuresPerIP] = RateBucket.parse("3/1h")
        }
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            for index in 1...3 {
                let reply = try await Self.signIn(http, "x\(index)@example.com", "guess", from: "192.0.2.\(index)")
                #expect(reply.errorCode == "EMAIL_NOT_FOUND")
            }
            let refused = try await Self.signIn(http, "x9@example.com", "guess", from: "192.0.2.200")
            #expect(refused.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many unsuccessful login attempts. Please try again later.")
        }
        // The resolution itself: only trusted hops are skipped, right to left.
        let policy = AccessPolicy(projectID: "p", apiKeys: nil, adminTokens: [:], trustedProxies: [IPNetwork("10.0.0.0/8")!])
        #expect(policy.clientAddress(peer: "10.1.2.3", forwardedFor: ["198.51.100.1, 10.9.9.9"]) == "198.51.100.1")
        #expect(
            policy.clientAddress(peer: "10.1.2.3", forwardedFor: ["1.1.1.1, 198.51.100.1"]) == "198.51.100.1",
            "a forged left entry stays ignored")
        #expect(policy.clientAddress(peer: "192.0.2.5", forwardedFor: ["198.51.100.1"]) == "192.0.2.5")
        #expect(policy.clientAddress(peer: "10.1.2.3", forwardedFor: ["not-an-address"]) == "10.1.2.3")
    }

    @Test("a full hashing queue answers 503 with Retry-After before any hashing starts")
    func hashingAdmission() async throws {
        let database = try await TestDatabase.createMigrated()
        var configuration = testConfiguration()
        configuration.accounts.hashQueueLimit = 1
        configuration.accounts.passwordHashParameters = .init(memoryKiB: 64 * 1024, iterations: 8)  // slow enough to overlap
        try await withServer(configuration, database: database) { http in
            let api = API(http: http)
            let replies = try await withThrowingTaskGroup(of: TestHTTPClient.Reply.self) { group in
                for index in 0..<6 {
                    group.addTask { try await api.client("signUp", ["email": "flood\(index)@example.com", "password": "secret-pass"]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let refused = replies.filter { $0.status == 503 }
            #expect(replies.contains { $0.status == 200 })
            #expect(!refused.isEmpty, "six concurrent hashes against a queue of one")
            #expect(refused.allSatisfy { $0.header("Retry-After") == "1" && $0.errorCode == "UNAVAILABLE" })
        }
    }
}
