import AccountPostgres
import AccountTesting
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

@testable import accountd

/// Issue 19, "Pre-account takeover": the other doors to the room the stripping rule guards, each
/// over real HTTP against PostgreSQL, in a `demo-` project and in a production configuration.
@Suite("Pre-account takeover paths")
struct TakeoverTests {
    /// Both configurations the checks must hold in.
    enum Mode: String, CaseIterable, Sendable {
        case demo, production

        var configuration: Configuration { self == .demo ? testConfiguration() : productionConfiguration() }

        func api(_ http: TestHTTPClient) -> API { API(http: http, project: configuration.projectID) }

        /// Runs `body` against a server in this mode on a fresh database.
        func run(_ body: @escaping @Sendable (API, TestHTTPClient, DatabaseURL) async throws -> Void) async throws {
            let database = try await TestDatabase.createMigrated()
            try await withServer(configuration, database: database) { http in try await body(api(http), http, database) }
        }
    }

    /// The path and query of the newest link of `kind` mailed to `recipient`.
    static func mailedLink(_ database: DatabaseURL, kind: String, to recipient: String) async throws -> String {
        let body = try await TestDatabase.withClient(database) { client in
            var text = ""
            for value in try await client.query(
                "SELECT body_text FROM email_outbox WHERE kind = \(kind) AND recipient = \(recipient) ORDER BY id DESC LIMIT 1"
            ).decode(String.self) { text = value }
            return text
        }
        let link = try #require(body.split(whereSeparator: \.isWhitespace).first { $0.contains("/__/auth/action?") })
        return try ActionHandlerTests.path(String(link))
    }

    static func user(_ api: API, _ localID: String) async throws -> [String: Any]? {
        (try await api.admin("lookup", ["localId": [localID]]).json["users"] as? [[String: Any]])?.first
    }

    static func count(_ sql: String, _ database: DatabaseURL) async throws -> Int {
        try await TestDatabase.withClient(database) { client in
            var count = 0
            for n in try await client.query(PostgresQuery(unsafeSQL: sql, binds: PostgresBindings())).decode(Int.self) {
                count = n
            }
            return count
        }
    }

    @Test(
        "point 1, the story: squat, move away, the victim recovers by the mailed link, signs in by email link; the squatter is out",
        arguments: Mode.allCases)
    func recoveryKeepsTheRule(mode: Mode) async throws {
        try await mode.run { api, http, database in
            // The squatter registers the victim's address with a password it knows, never verifies it,
            // and moves the account to its own address (a fresh sign-in: the change is allowed).
            let squat = try await api.signUp("victim@example.com", "squatter-pass")
            let moved = try await api.client(
                "update", ["idToken": squat.idToken, "email": "squatter@example.com", "returnSecureToken": true])
            #expect(moved.status == 200)
            let squatter = Session(moved)
            #expect(try await Self.user(api, squat.localID)?["email"] as? String == "squatter@example.com")

            // The victim (or the victim's mail gateway) follows the recovery link mailed to the old address.
            let recoverPath = try await Self.mailedLink(database, kind: "RECOVER_EMAIL", to: "victim@example.com")
            let page = try await http.get(recoverPath)
            #expect(try await Self.user(api, squat.localID)?["email"] as? String == "squatter@example.com", "fetching applies nothing")
            #expect(try await ActionHandlerTests.confirm(http, page).status == 200)
            let restored = try await Self.user(api, squat.localID)
            #expect(restored?["email"] as? String == "victim@example.com")
            #expect(restored?["emailVerified"] as? Bool == false, "an address never proven comes back unproven")

            // The victim signs in by email link: the rule strips the squatter's password and sessions.
            try await tick()
            let code = try await EmailActionsTests.signInCode(api, "victim@example.com")
            let owner = try await api.client("signInWithEmailLink", ["email": "victim@example.com", "oobCode": code])
            #expect(owner.status == 200)
            #expect(owner.string("localId") == squat.localID)
            #expect(
                try await api.client("signInWithPassword", ["email": "victim@example.com", "password": "squatter-pass"]).errorCode
                    == "INVALID_PASSWORD")
            for old in [squat, squatter] {
                #expect(try await api.refresh(old.refreshToken).errorCode == "TOKEN_EXPIRED")
                #expect(
                    try await api.admin("verifyIdToken", ["idToken": old.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")
            }
            #expect(try await api.refresh(Session(owner).refreshToken).status == 200)
        }
    }

    @Test("point 1: recovering an address that was verified restores it verified")
    func recoveryOfAVerifiedAddress() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let created = try await api.admin("signUp", ["email": "vera@example.com", "password": "secret-pass", "emailVerified": true])
            let localID = try #require(created.string("localId"))
            let vera = try await api.signIn("vera@example.com")
            #expect(try await api.client("update", ["idToken": vera.idToken, "email": "vera.new@example.com"]).status == 200)
            #expect(try await Self.user(api, localID)?["emailVerified"] as? Bool == false)
            let path = try await Self.mailedLink(database, kind: "RECOVER_EMAIL", to: "vera@example.com")
            let code = try #require(ActionHandlerTests.formFields(path)["oobCode"])
            #expect(try await api.client("update", ["oobCode": code]).status == 200)
            let restored = try await Self.user(api, localID)
            #expect(restored?["email"] as? String == "vera@example.com")
            #expect(restored?["emailVerified"] as? Bool == true)
        }
    }

    @Test("point 2: GET and HEAD of every kind of link spend nothing; only the page's POST applies", arguments: Mode.allCases)
    func fetchingSpendsNothing(mode: Mode) async throws {
        try await mode.run { api, http, database in
            let alice = try await api.signUp("alice@example.com")
            var links: [String: String] = [:]
            for (type, extra) in [
                ("VERIFY_EMAIL", [:] as [String: any Sendable]), ("PASSWORD_RESET", [:]),
                ("VERIFY_AND_CHANGE_EMAIL", ["newEmail": "alice.new@example.com"]),
                ("EMAIL_SIGNIN", ["continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true]),
            ] {
                links[type] = try await ActionHandlerTests.link(api, type, "alice@example.com", extra).path
            }
            // A scanner fetches each link a few times (it does not follow the sign-in link's redirect
            // off this machine).
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            let scanner = TestHTTPClient(port: Int(http.baseURL.split(separator: ":").last!)!, client: client)
            for path in links.values {
                for _ in 0..<3 {
                    _ = try await scanner.send(.HEAD, path)
                    #expect(try await scanner.get(path).status < 400, "\(path)")
                }
            }
            try await client.shutdown()
            #expect(try await Self.count("SELECT count(*)::int FROM action_codes WHERE used_at IS NOT NULL", database) == 0)
            let after = try await Self.user(api, alice.localID)
            #expect(after?["emailVerified"] as? Bool == false)
            #expect(after?["email"] as? String == "alice@example.com")
            // Each code still works for the person who then uses it; a POST without the page's token
            // applies nothing.
            let reset = try #require(ActionHandlerTests.formFields(links["PASSWORD_RESET"]!)["oobCode"])
            #expect(try await api.client("resetPassword", ["oobCode": reset]).status == 200)
            let verify = try #require(ActionHandlerTests.formFields(links["VERIFY_EMAIL"]!)["oobCode"])
            let forged = try await http.send(
                .POST, "/__/auth/action/apply", body: ActionHandlerTests.form([("oobCode", verify)]),
                headers: ActionHandlerTests.formHeaders)
            #expect(forged.status == 403)
            #expect(try await ActionHandlerTests.confirm(http, try await http.get(links["VERIFY_EMAIL"]!)).status == 200)
            #expect(try await Self.user(api, alice.localID)?["emailVerified"] as? Bool == true)
            let signIn = try #require(ActionHandlerTests.formFields(links["EMAIL_SIGNIN"]!)["oobCode"])
            #expect(try await api.client("signInWithEmailLink", ["email": "alice@example.com", "oobCode": signIn]).status == 200)
        }
    }

    @Test("point 3: linking an email by link needs a recent sign-in; a refreshed token of an old session is not one")
    func linkingNeedsRecentLogin() async throws {
        let clock = ShiftedClock()
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database, clock: clock) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let code = try await EmailActionsTests.signInCode(api, "attacker@example.com")
            clock.advance(301)
            let refreshed = Session(try await api.refresh(alice.refreshToken))
            #expect(!refreshed.idToken.isEmpty)
            for token in [alice.idToken, refreshed.idToken] {
                let reply = try await api.client(
                    "signInWithEmailLink", ["email": "attacker@example.com", "oobCode": code, "idToken": token])
                #expect(reply.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            }
            #expect(try await Self.user(api, alice.localID)?["email"] as? String == "alice@example.com")
            // Signed in again, the same code links (it was not spent by the refusals).
            let fresh = try await api.signIn("alice@example.com")
            let linked = try await api.client(
                "signInWithEmailLink", ["email": "attacker@example.com", "oobCode": code, "idToken": fresh.idToken])
            #expect(linked.status == 200)
        }
    }

    @Test("point 3: an anonymous account is upgraded by email link or password however old its session: it has no other credential")
    func anonymousUpgradeNeedsNoRecentLogin() async throws {
        let clock = ShiftedClock()
        var configuration = testConfiguration()
        configuration.accounts.allowAnonymous = true
        try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            let first = Session(try await api.client("signUp", ["returnSecureToken": true]))
            let second = Session(try await api.client("signUp", ["returnSecureToken": true]))
            #expect(!first.idToken.isEmpty && !second.idToken.isEmpty)
            let code = try await EmailActionsTests.signInCode(api, "kept@example.com")
            clock.advance(3000)
            let linked = try await api.client(
                "signInWithEmailLink", ["email": "kept@example.com", "oobCode": code, "idToken": first.idToken])
            #expect(linked.status == 200, "\(linked.json)")
            #expect(linked.string("localId") == first.localID)
            let upgraded = try await api.client(
                "signUp", ["idToken": second.idToken, "email": "kept2@example.com", "password": "secret-pass", "returnSecureToken": true])
            #expect(upgraded.status == 200, "\(upgraded.json)")
            // Once it has a credential, the rule applies again.
            clock.advance(3000)
            let stale = Session(try await api.refresh(Session(linked).refreshToken))
            #expect(
                try await api.client("update", ["idToken": stale.idToken, "password": "another-pass"]).errorCode
                    == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
    }

    @Test("point 4: a change code whose sender's session is revoked while it is written is refused, and no code survives")
    func codeUnderTheUserLock() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let squat = try await api.signUp("victim@example.com", "squatter-pass")
            // The strip commits while the request has read the user and is about to write the code.
            let reply = try await whileUserLocked(
                squat.localID, in: database,
                run: {
                    try await api.client(
                        "sendOobCode",
                        ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": squat.idToken, "newEmail": "squatter@example.com"])
                },
                thenCommit: """
                    WITH revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = 'EMAIL_LINK_TAKEOVER_PROTECTION'
                        WHERE local_id = '\(squat.localID)')
                    UPDATE users SET credential_version = credential_version + 1, valid_since = extract(epoch FROM now())::bigint + 1
                    WHERE local_id = '\(squat.localID)'
                    """
            )
            #expect(reply.errorCode == "TOKEN_EXPIRED")
            #expect(try await Self.count("SELECT count(*)::int FROM action_codes WHERE kind = 'VERIFY_AND_CHANGE_EMAIL'", database) == 0)
            #expect(try await Self.count("SELECT count(*)::int FROM email_outbox WHERE kind = 'VERIFY_AND_CHANGE_EMAIL'", database) == 0)
        }
    }

    @Test("point 4: an admin's code for a user whose credentials changed while it was made is refused as busy, then made")
    func adminCodeUnderTheUserLock() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let bob = try await api.signUp("bob@example.com")
            let reply = try await whileUserLocked(
                bob.localID, in: database,
                run: {
                    try await api.admin(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "bob@example.com", "returnOobLink": true])
                },
                thenCommit: "UPDATE users SET credential_version = credential_version + 1 WHERE local_id = '\(bob.localID)'"
            )
            #expect(reply.status == 503)
            #expect(reply.header("Retry-After") == "1")
            #expect(try await Self.count("SELECT count(*)::int FROM action_codes", database) == 0)
            let again = try await api.admin(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "bob@example.com", "returnOobLink": true])
            #expect(again.status == 200)
        }
    }

    @Test("point 5: a newer code retires the older one of its kind for the same user", arguments: Mode.allCases)
    func newerCodeRetiresOlder(mode: Mode) async throws {
        try await mode.run { api, http, database in
            let alice = try await api.signUp("alice@example.com")
            let firstReset = try await ActionHandlerTests.link(api, "PASSWORD_RESET", "alice@example.com").code
            let firstVerify = try await ActionHandlerTests.link(api, "VERIFY_EMAIL", "alice@example.com").code
            let firstSignIn = try await EmailActionsTests.signInCode(api, "alice@example.com")
            let secondReset = try await ActionHandlerTests.link(api, "PASSWORD_RESET", "alice@example.com").code
            let secondVerify = try await ActionHandlerTests.link(api, "VERIFY_EMAIL", "alice@example.com").code
            let secondSignIn = try await EmailActionsTests.signInCode(api, "alice@example.com")
            #expect(try await api.client("resetPassword", ["oobCode": firstReset]).errorCode == "INVALID_OOB_CODE")
            #expect(try await api.client("update", ["oobCode": firstVerify]).errorCode == "INVALID_OOB_CODE")
            #expect(
                try await api.client("signInWithEmailLink", ["email": "alice@example.com", "oobCode": firstSignIn]).errorCode
                    == "INVALID_OOB_CODE")
            // A client's own request retires the earlier one too, and other kinds are left alone.
            #expect(try await api.client("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": alice.idToken]).status == 200)
            #expect(try await api.client("update", ["oobCode": secondVerify]).errorCode == "INVALID_OOB_CODE")
            #expect(try await api.client("resetPassword", ["oobCode": secondReset]).status == 200)
            #expect(try await api.client("signInWithEmailLink", ["email": "alice@example.com", "oobCode": secondSignIn]).status == 200)
        }
    }

    @Test("point 6: no email-sign-in link for a disabled user, for clients and admins", arguments: Mode.allCases)
    func noLinkForDisabledUser(mode: Mode) async throws {
        try await mode.run { api, http, database in
            let dora = try await api.signUp("dora@example.com")
            _ = try await api.admin("update", ["localId": dora.localID, "disableUser": true])
            var body = EmailActionsTests.signIn
            body["email"] = "dora@example.com"
            #expect(try await api.client("sendOobCode", body).errorCode == "USER_DISABLED")
            body["returnOobLink"] = true
            #expect(try await api.admin("sendOobCode", body).errorCode == "USER_DISABLED")
            #expect(try await Self.count("SELECT count(*)::int FROM action_codes", database) == 0)
            #expect(try await Self.count("SELECT count(*)::int FROM email_outbox", database) == 0)
        }
    }

    @Test("point 7: an oobCode sent with an ID token that does not verify is refused and not spent", arguments: Mode.allCases)
    func oobCodeWithBadToken(mode: Mode) async throws {
        try await mode.run { api, http, database in
            let alice = try await api.signUp("alice@example.com")
            let code = try await ActionHandlerTests.link(api, "VERIFY_EMAIL", "alice@example.com").code
            var forged = alice.idToken
            forged.removeLast(4)
            forged += "AAAA"
            for token in ["not-a-token", forged] {
                #expect(try await api.client("update", ["oobCode": code, "idToken": token]).errorCode == "INVALID_ID_TOKEN")
            }
            #expect(try await Self.user(api, alice.localID)?["emailVerified"] as? Bool == false)
            #expect(try await api.client("update", ["oobCode": code, "idToken": alice.idToken]).status == 200)
            #expect(try await Self.user(api, alice.localID)?["emailVerified"] as? Bool == true)
        }
    }
}
