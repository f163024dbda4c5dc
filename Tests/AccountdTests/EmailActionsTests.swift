import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

@testable import accountd

/// identity-toolkit.md §7: sendOobCode, signInWithEmailLink and THE RULE, applying codes, resetPassword.
@Suite("Email actions and email-link sign-in")
struct EmailActionsTests {
    static let signIn: [String: any Sendable] = [
        "requestType": "EMAIL_SIGNIN", "continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true,
    ]

    /// An admin-made sign-in code for `email`.
    static func signInCode(_ api: API, _ email: String) async throws -> String {
        var body = signIn
        body["email"] = email
        body["returnOobLink"] = true
        let reply = try await api.admin("sendOobCode", body)
        guard let code = reply.string("oobCode") else {
            throw TestDatabaseError("sendOobCode: \(String(decoding: reply.body, as: UTF8.self))")
        }
        return code
    }

    static func outboxCount(_ database: DatabaseURL) async throws -> Int {
        try await TestDatabase.withClient(database) { client in
            var count = 0
            for n in try await client.query("SELECT count(*)::int FROM email_outbox").decode(Int.self) { count = n }
            return count
        }
    }

    @Test("checklist 18–27, 32: request validation in order, and the links it builds")
    func sendValidation() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            _ = try await api.signUp("alice@example.com")
            func send(_ body: [String: any Sendable], admin: Bool = false) async throws -> TestHTTPClient.Reply {
                admin ? try await api.admin("sendOobCode", body) : try await api.client("sendOobCode", body)
            }
            #expect(try await send(["email": "alice@example.com"]).errorCode == "MISSING_REQ_TYPE")
            #expect(
                try await send(["requestType": "NOPE", "email": "alice@example.com"]).errorMessage
                    == "INVALID_REQ_TYPE : Unsupported request type")
            #expect(
                try await send(["requestType": "PASSWORD_RESET", "email": "alice@example.com", "returnOobLink": true]).errorCode
                    == "INSUFFICIENT_PERMISSION")
            #expect(
                try await send([
                    "requestType": "PASSWORD_RESET", "email": "alice@example.com", "continueUrl": "https://not-authorized.example.net/x",
                ])
                .errorMessage == "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
            #expect(
                try await send(["requestType": "PASSWORD_RESET", "email": "alice@example.com", "continueUrl": "not a url"]).errorCode
                    == "INVALID_CONTINUE_URI")
            #expect(
                try await send(["requestType": "PASSWORD_RESET", "email": "alice@example.com", "continueUrl": "https://app.localhost/x"])
                    .status
                    == 200)
            #expect(
                try await send(["requestType": "EMAIL_SIGNIN", "email": "alice@example.com", "canHandleCodeInApp": true]).errorCode
                    == "MISSING_CONTINUE_URI")
            var base = Self.signIn
            base["email"] = "alice@example.com"
            for (extra, code) in [
                (["androidInstallApp": true] as [String: any Sendable], "MISSING_ANDROID_PACKAGE_NAME"),
                (["androidMinimumVersionCode": "12"], "MISSING_ANDROID_PACKAGE_NAME"),
                (["iOSAppStoreId": "123"], "MISSING_IOS_BUNDLE_ID"),
                (["linkDomain": "links.example.org"], "INVALID_HOSTING_LINK_DOMAIN"),
                (["dynamicLinkDomain": "x.page.link"], "INVALID_DYNAMIC_LINK_DOMAIN"),
                (["canHandleCodeInApp": false], "INVALID_REQ_TYPE"),
            ] {
                #expect(try await send(base.merging(extra) { $1 }).errorCode == code, "\(extra)")
            }
            #expect(try await Self.outboxCount(database) == 1, "only the one accepted request queued mail")

            // A web link (in-app, no app ids): every parameter, in order.
            var admin = base
            admin["returnOobLink"] = true
            let web = try await send(admin, admin: true)
            #expect(web.status == 200)
            let code = try #require(web.string("oobCode"))
            #expect(code.count == 43)
            let link = try #require(URLComponents(string: web.string("oobLink") ?? ""))
            #expect(link.path == "/__/auth/action")
            #expect(link.queryItems?.map(\.name) == ["mode", "oobCode", "apiKey", "continueUrl", "lang"])
            #expect(link.queryItems?.first { $0.name == "mode" }?.value == "signIn")
            #expect(link.queryItems?.first { $0.name == "oobCode" }?.value == code)
            #expect(link.queryItems?.first { $0.name == "apiKey" }?.value == "test-api-key")
            #expect(link.queryItems?.first { $0.name == "continueUrl" }?.value == "https://app.example.com/finish")
            #expect(link.queryItems?.first { $0.name == "lang" }?.value == "en")
            #expect(try await Self.outboxCount(database) == 1, "returnOobLink queues no mail")

            // An app link: bundle id, package, install → no afl.
            var app = admin
            app["iOSBundleId"] = "com.example.ios"
            app["androidPackageName"] = "com.example.android"
            app["androidInstallApp"] = true
            let appLink = try #require(URLComponents(string: try await send(app, admin: true).string("oobLink") ?? ""))
            #expect(appLink.scheme == "https")
            #expect(appLink.path == "/__/auth/links")
            #expect(appLink.queryItems?.first { $0.name == "ibi" }?.value == "com.example.ios")
            #expect(appLink.queryItems?.first { $0.name == "apn" }?.value == "com.example.android")
            #expect(appLink.queryItems?.contains { $0.name == "afl" } == false)
            let inner = try #require(URLComponents(string: appLink.queryItems?.first { $0.name == "link" }?.value ?? ""))
            #expect(inner.queryItems?.first { $0.name == "mode" }?.value == "signIn")
        }
    }

    @Test("checklist 28–31: account state; change codes go to the new address and answer the old")
    func sendAccountState() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            _ = try await api.signUp("bob@example.com")
            #expect(
                try await api.admin("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "who@example.com"]).errorCode
                    == "EMAIL_NOT_FOUND")
            #expect(
                try await api.admin("sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "who@example.com"]).errorCode
                    == "USER_NOT_FOUND")
            #expect(try await api.client("sendOobCode", ["requestType": "VERIFY_EMAIL"]).errorCode == "MISSING_ID_TOKEN")
            let taken = try await api.client(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": alice.idToken, "newEmail": "bob@example.com"])
            #expect(taken.errorCode == "EMAIL_EXISTS")
            #expect(try await Self.outboxCount(database) == 0)
            let change = try await api.client(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": alice.idToken, "newEmail": "new@example.com"])
            #expect(change.status == 200)
            #expect(change.string("email") == "alice@example.com")
            let recipient = try await TestDatabase.withClient(database) { client in
                var to = ""
                for value in try await client.query("SELECT recipient FROM email_outbox").decode(String.self) { to = value }
                return to
            }
            #expect(recipient == "new@example.com")
            let verify = try await api.client("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": alice.idToken])
            #expect(verify.status == 200)
            #expect(try await Self.outboxCount(database) == 2)
        }
    }

    @Test("the story: an attacker pre-registers, the owner completes an email link, the attacker is out")
    func theStory() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            // Someone signs up with the owner's address and a password they know; never verifies.
            let attacker = try await api.signUp("owner@example.com", "attacker-pw")
            let attackerSecond = try await api.signIn("owner@example.com", "attacker-pw")
            try await tick()
            // The owner completes an email-link sign-in.
            let code = try await Self.signInCode(api, "owner@example.com")
            let completed = try await api.client("signInWithEmailLink", ["email": "owner@example.com", "oobCode": code])
            #expect(completed.status == 200)
            #expect(completed.string("localId") == attacker.localID)
            #expect(completed.json["isNewUser"] as? Bool == false)
            let owner = Session(completed)
            #expect(owner.claims["email_verified"] as? Bool == true)
            #expect((owner.claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String == "password")

            // The password is gone; discovery lists only emailLink.
            #expect(
                try await api.client("signInWithPassword", ["email": "owner@example.com", "password": "attacker-pw"]).errorCode
                    == "INVALID_PASSWORD")
            let discovery = try await api.client("createAuthUri", ["identifier": "owner@example.com", "continueUri": "http://localhost"])
            #expect(discovery.json["signinMethods"] as? [String] == ["emailLink"])
            #expect(discovery.json["allProviders"] as? [String] == ["password"])
            let record = (try await api.admin("lookup", ["localId": [attacker.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(record?["passwordHash"] == nil)
            #expect(record?["emailVerified"] as? Bool == true)
            #expect(record?["emailLinkSignin"] as? Bool == true)

            // Every old session is dead: refresh, lookup, verifyIdToken and the Admin SDK's rule.
            for old in [attacker, attackerSecond] {
                #expect(try await api.refresh(old.refreshToken).errorCode == "TOKEN_EXPIRED")
                #expect(try await api.client("lookup", ["idToken": old.idToken]).errorCode == "TOKEN_EXPIRED")
                #expect(
                    try await api.admin("verifyIdToken", ["idToken": old.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")
                #expect((old.claims["iat"] as? Int ?? 0) < Int(record?["validSince"] as? String ?? "") ?? 0)
            }
            // The new session works.
            #expect(try await api.refresh(owner.refreshToken).status == 200)
            #expect(try await api.admin("verifyIdToken", ["idToken": owner.idToken, "checkRevoked": true]).status == 200)
            // The code is spent.
            #expect(
                try await api.client("signInWithEmailLink", ["email": "owner@example.com", "oobCode": code]).errorCode == "INVALID_OOB_CODE"
            )
        }
    }

    @Test("checklist 41: sign-up and completion in one second still revoke the sign-up's token for the Admin SDK")
    func sameSecondStrip() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let code = try await Self.signInCode(api, "same@example.com")
            let early = try await api.signUp("same@example.com", "attacker-pw")
            let completed = Session(try await api.client("signInWithEmailLink", ["email": "same@example.com", "oobCode": code]))
            let validSince =
                Int(
                    (try await api.admin("lookup", ["localId": [early.localID]]).json["users"] as? [[String: Any]])?
                        .first?["validSince"] as? String ?? "") ?? 0
            #expect((early.claims["iat"] as? Int ?? .max) < validSince)
            #expect((completed.claims["iat"] as? Int ?? 0) >= validSince)
        }
    }

    @Test("checklist 33–38, 44: new users, wrong email, spent and expired codes, disabled accounts, verified accounts kept")
    func completionRules() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let code = try await Self.signInCode(api, "new@example.com")
            #expect(
                try await api.client("signInWithEmailLink", ["email": "other@example.com", "oobCode": code]).errorMessage
                    == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
            let created = try await api.client("signInWithEmailLink", ["email": "NEW@example.com", "oobCode": code])
            #expect(created.json["isNewUser"] as? Bool == true)
            let discovery = try await api.client("createAuthUri", ["identifier": "new@example.com", "continueUri": "http://localhost"])
            #expect(discovery.json["signinMethods"] as? [String] == ["emailLink"])
            #expect(
                try await api.client("signInWithEmailLink", ["email": "new@example.com", "oobCode": code]).errorCode == "INVALID_OOB_CODE")
            #expect(try await api.client("signInWithEmailLink", ["email": "new@example.com"]).errorCode == "MISSING_OOB_CODE")
            #expect(try await api.client("signInWithEmailLink", ["oobCode": code]).errorCode == "MISSING_EMAIL")

            let reset = try await api.admin(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "new@example.com", "returnOobLink": true])
            #expect(
                try await api.client("signInWithEmailLink", ["email": "new@example.com", "oobCode": reset.string("oobCode") ?? ""])
                    .errorCode
                    == "INVALID_OOB_CODE")
            // A code of another kind is refused without being spent.
            #expect(try await api.client("resetPassword", ["oobCode": reset.string("oobCode") ?? ""]).string("email") == "new@example.com")
            let stale = try await Self.signInCode(api, "new@example.com")
            try await TestDatabase.execute(
                "UPDATE action_codes SET expires_at = now() - interval '1 second' WHERE kind = 'EMAIL_SIGNIN' AND used_at IS NULL",
                on: database)
            #expect(
                try await api.client("signInWithEmailLink", ["email": "new@example.com", "oobCode": stale]).errorCode == "EXPIRED_OOB_CODE")

            // Disabled: refused, nothing changes, the code still works once re-enabled; the password survives.
            let dora = try await api.signUp("dora@example.com")
            let doraCode = try await Self.signInCode(api, "dora@example.com")
            _ = try await api.admin("update", ["localId": dora.localID, "disableUser": true])
            #expect(
                try await api.client("signInWithEmailLink", ["email": "dora@example.com", "oobCode": doraCode]).errorCode == "USER_DISABLED"
            )
            _ = try await api.admin("update", ["localId": dora.localID, "disableUser": false])
            _ = try await api.signIn("dora@example.com")
            #expect(try await api.client("signInWithEmailLink", ["email": "dora@example.com", "oobCode": doraCode]).status == 200)

            // Verified account: password and sessions kept; methods include both.
            let vera = try await api.admin("signUp", ["email": "vera@example.com", "password": "secret-pass", "emailVerified": true])
            #expect(vera.status == 200)
            let veraSession = try await api.signIn("vera@example.com")
            let veraCode = try await Self.signInCode(api, "vera@example.com")
            #expect(try await api.client("signInWithEmailLink", ["email": "vera@example.com", "oobCode": veraCode]).status == 200)
            _ = try await api.signIn("vera@example.com")
            #expect(try await api.refresh(veraSession.refreshToken).status == 200)
            let methods = try await api.client("createAuthUri", ["identifier": "vera@example.com", "continueUri": "http://localhost"])
            #expect(Set(methods.json["signinMethods"] as? [String] ?? []) == ["password", "emailLink"])
        }
    }

    @Test("checklist 36–37: one code completed four times at once succeeds once; two codes for one new email make one user")
    func concurrentCompletions() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let code = try await Self.signInCode(api, "race@example.com")
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let reply = try await api.client("signInWithEmailLink", ["email": "race@example.com", "oobCode": code])
                        return reply.status == 200 ? "OK" : reply.errorCode ?? "?"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.sorted() == ["INVALID_OOB_CODE", "INVALID_OOB_CODE", "INVALID_OOB_CODE", "OK"])

            let a = try await Self.signInCode(api, "twin@example.com")
            let b = try await Self.signInCode(api, "twin@example.com")
            let replies = try await withThrowingTaskGroup(of: TestHTTPClient.Reply.self) { group in
                for code in [a, b] {
                    group.addTask { try await api.client("signInWithEmailLink", ["email": "twin@example.com", "oobCode": code]) }
                }
                return try await group.reduce(into: [TestHTTPClient.Reply]()) { $0.append($1) }
            }
            #expect(replies.map(\.status) == [200, 200])
            #expect(Set(replies.compactMap { $0.string("localId") }).count == 1)
            #expect(replies.filter { $0.json["isNewUser"] as? Bool == true }.count == 1)
        }
    }

    @Test("checklist 42–43, 72: the rule strips phone, links and pending change codes; a reset on an unverified account strips the phone")
    func stripsEverythingUnproven() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let user = try await api.signUp("pat@example.com")
            _ = try await api.admin("update", ["localId": user.localID, "phoneNumber": "+15550001111"])
            let change = try await api.admin(
                "sendOobCode",
                [
                    "requestType": "VERIFY_AND_CHANGE_EMAIL", "email": "pat@example.com", "newEmail": "pat2@example.com",
                    "returnOobLink": true,
                ]
            )
            let changeCode = try #require(change.string("oobCode"))
            let code = try await Self.signInCode(api, "pat@example.com")
            #expect(try await api.client("signInWithEmailLink", ["email": "pat@example.com", "oobCode": code]).status == 200)
            let record = (try await api.admin("lookup", ["localId": [user.localID]]).json["users"] as? [[String: Any]])?.first
            #expect((record?["providerUserInfo"] as? [[String: Any]])?.map { $0["providerId"] as? String } == ["password"])
            #expect(record?["phoneNumber"] == nil)
            #expect(try await api.client("update", ["oobCode": changeCode]).errorCode == "INVALID_OOB_CODE")

            let quinn = try await api.signUp("quinn@example.com")
            _ = try await api.admin("update", ["localId": quinn.localID, "phoneNumber": "+15550002222"])
            let reset = try await api.admin(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "quinn@example.com", "returnOobLink": true])
            #expect(
                try await api.client("resetPassword", ["oobCode": reset.string("oobCode") ?? "", "newPassword": "fresh-pass"]).status == 200
            )
            let after = (try await api.admin("lookup", ["localId": [quinn.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(after?["phoneNumber"] == nil)
            #expect(after?["emailVerified"] as? Bool == true)
        }
    }

    @Test("checklist 46–48: linking with an ID token")
    func linking() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let phoneOnly = try await api.admin("signUp", ["phoneNumber": "+15550003333"])
            let phoneID = try #require(phoneOnly.string("localId"))
            // Give the phone-only user a session through a password it then loses: simplest is a custom
            // session via email link on another address; here we use update as admin to add an email first.
            _ = try await api.admin("update", ["localId": phoneID, "email": "b@example.com", "password": "secret-pass"])
            let b = try await api.signIn("b@example.com")
            _ = try await api.signUp("taken@example.com")
            let takenCode = try await Self.signInCode(api, "taken@example.com")
            #expect(
                try await api.client("signInWithEmailLink", ["email": "taken@example.com", "oobCode": takenCode, "idToken": b.idToken])
                    .errorCode
                    == "EMAIL_EXISTS")
            #expect(
                try await api.client("signInWithEmailLink", ["email": "taken@example.com", "oobCode": takenCode]).status == 200,
                "the failed link did not consume the code")

            // B (email b) links e: B's email becomes e, verified; B's older sessions end; the phone stays.
            let code = try await Self.signInCode(api, "e@example.com")
            let linked = try await api.client("signInWithEmailLink", ["email": "e@example.com", "oobCode": code, "idToken": b.idToken])
            #expect(linked.status == 200)
            #expect(linked.string("localId") == phoneID)
            let record = (try await api.admin("lookup", ["localId": [phoneID]]).json["users"] as? [[String: Any]])?.first
            #expect(record?["email"] as? String == "e@example.com")
            #expect(record?["emailVerified"] as? Bool == true)
            #expect(record?["phoneNumber"] as? String == "+15550003333")
            #expect(try await api.refresh(b.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(Session(linked).refreshToken).status == 200)
        }
    }

    @Test("checklist 65–66, 68–71: applying verify and change codes; checking and applying reset codes")
    func applyingCodes() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let verify = try await api.admin(
                "sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "alice@example.com", "returnOobLink": true])
            let verifyCode = try #require(verify.string("oobCode"))
            let applied = try await api.client("update", ["oobCode": verifyCode])
            #expect(applied.json["emailVerified"] as? Bool == true)
            #expect(applied.string("idToken") == nil)
            #expect(try await api.client("update", ["oobCode": verifyCode]).errorCode == "INVALID_OOB_CODE")
            // Verifying keeps the password (not the rule).
            let s2 = try await api.signIn("alice@example.com")

            // Refused inside the store's transaction (a disabled account): the code is not spent.
            let bob = try await api.signUp("bob@example.com")
            let bobCode = try #require(
                try await api.admin("sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "bob@example.com", "returnOobLink": true])
                    .string("oobCode"))
            _ = try await api.admin("update", ["localId": bob.localID, "disableUser": true])
            #expect(try await api.client("update", ["oobCode": bobCode]).errorCode == "USER_DISABLED")
            _ = try await api.admin("update", ["localId": bob.localID, "disableUser": false])
            #expect(try await api.client("update", ["oobCode": bobCode]).json["emailVerified"] as? Bool == true)

            let change = try await api.admin(
                "sendOobCode",
                [
                    "requestType": "VERIFY_AND_CHANGE_EMAIL", "email": "alice@example.com", "newEmail": "alice2@example.com",
                    "returnOobLink": true,
                ]
            )
            let changed = try await api.client("update", ["oobCode": change.string("oobCode") ?? ""])
            #expect(changed.string("email") == "alice2@example.com")
            #expect(changed.json["emailVerified"] as? Bool == true)
            #expect(try await api.refresh(s2.refreshToken).errorCode == "TOKEN_EXPIRED")
            let recover = try await TestDatabase.withClient(database) { client in
                var row: (String, String?) = ("", nil)
                for value in try await client.query(
                    "SELECT email, new_email FROM action_codes WHERE kind = 'RECOVER_EMAIL'"
                ).decode((String, String?).self) { row = value }
                return row
            }
            #expect(recover.0 == "alice2@example.com")
            #expect(recover.1 == "alice@example.com")
            _ = alice

            let reset = try await api.admin(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "alice2@example.com", "returnOobLink": true])
            let resetCode = try #require(reset.string("oobCode"))
            let check = try await api.client("resetPassword", ["oobCode": resetCode])
            #expect(check.string("requestType") == "PASSWORD_RESET")
            #expect(check.string("email") == "alice2@example.com")
            _ = try await api.signIn("alice2@example.com")
            let signInCheck = try await api.client("resetPassword", ["oobCode": try await Self.signInCode(api, "alice2@example.com")])
            #expect(signInCheck.string("requestType") == "EMAIL_SIGNIN")
            #expect(signInCheck.string("email") == nil)
            #expect(try await api.client("resetPassword", ["oobCode": resetCode, "newPassword": "12345"]).errorCode == "WEAK_PASSWORD")
            let session = try await api.signIn("alice2@example.com")
            let done = try await api.client("resetPassword", ["oobCode": resetCode, "newPassword": "brand-new"])
            #expect(done.status == 200)
            _ = try await api.signIn("alice2@example.com", "brand-new")
            #expect(
                try await api.client("signInWithPassword", ["email": "alice2@example.com", "password": "secret-pass"]).errorCode
                    == "INVALID_PASSWORD")
            #expect(try await api.refresh(session.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(
                try await api.client("resetPassword", ["oobCode": resetCode, "newPassword": "again-new"]).errorCode == "INVALID_OOB_CODE")
            #expect(try await api.client("resetPassword", [:]).errorCode == "MISSING_OOB_CODE")
        }
    }

    @Test("a direct email change sends the old address a recover code; applying it restores the address and revokes sessions")
    func directChangeRecover() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let changed = try await api.client("update", ["idToken": alice.idToken, "email": "thief@example.com"])
            #expect(changed.status == 200)
            #expect(changed.string("email") == "thief@example.com")
            let later = Session(changed)
            let recipients = try await TestDatabase.withClient(database) { client in
                var rows: [String] = []
                for to in try await client.query("SELECT recipient FROM email_outbox ORDER BY id").decode(String.self) {
                    rows.append(to)
                }
                return rows
            }
            #expect(recipients == ["alice@example.com"])
            // The recover link's code, as the old owner would click it: read through the code's hash is
            // impossible, so take it from the queued message body.
            let body = try await TestDatabase.withClient(database) { client in
                var text = ""
                for value in try await client.query("SELECT body_text FROM email_outbox").decode(String?.self) {
                    text = value ?? ""
                }
                return text
            }
            let link = try #require(body.split(whereSeparator: \.isWhitespace).first { $0.contains("mode=recoverEmail") })
            let code = try #require(URLComponents(string: String(link))?.queryItems?.first { $0.name == "oobCode" }?.value)
            let restored = try await api.client("update", ["oobCode": code])
            #expect(restored.string("email") == "alice@example.com")
            #expect(try await api.refresh(later.refreshToken).errorCode == "TOKEN_EXPIRED")
        }
    }
}
