import AccountCrypto
import AccountPostgres
import AccountTesting
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

@testable import accountd

/// identity-toolkit.md §7 checklist, transport and sign-up/sign-in lines, over real HTTP and PostgreSQL.
@Suite("Transport checks, sign-up and password sign-in")
struct PasswordAccountsTests {
    @Test("§1.3: no key 403, unknown key 400, bad bearer 401, key on a project path 403; bare and prefixed alike")
    func transport() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let body = ["email": "t@example.com", "password": "secret-pass"]
            let noKey = try await http.post("/v1/accounts:signUp", body)
            #expect(noKey.status == 403)
            #expect(noKey.errorMessage == "The request is missing a valid API key.")
            let badKey = try await http.post("/v1/accounts:signUp?key=nope", body)
            #expect(badKey.status == 400)
            #expect(badKey.errorMessage == "API key not valid. Please pass a valid API key.")
            for bearer in ["Bearer wrong", "Bearer owner"] {
                let reply = try await http.post("/v1/accounts:signUp?key=test-api-key", body, headers: [("Authorization", bearer)])
                #expect(reply.status == 401)
            }
            let scoped = try await http.post("/v1/projects/demo-test/accounts:lookup?key=test-api-key", ["localId": ["x"]])
            #expect(scoped.status == 403)
            let otherProject = try await http.post(
                "/v1/projects/other/accounts:lookup", ["localId": ["x"]], headers: [API.admin]
            )
            #expect(otherProject.status == 403)
            // One body, two spellings: identical behaviour (the second is EMAIL_EXISTS).
            let api = API(http: http)
            let bare = try await api.client("signUp", body)
            let prefixed = try await api.client("signUp", body, prefix: "/identitytoolkit.googleapis.com")
            #expect(bare.status == 200)
            #expect(prefixed.errorCode == "EMAIL_EXISTS")
            #expect(prefixed.status == 400)
            let error = try #require(prefixed.json["error"] as? [String: Any])
            #expect(error["status"] == nil)
            #expect((error["errors"] as? [[String: Any]])?.first?["message"] as? String == "EMAIL_EXISTS")
        }
    }

    @Test("§1.2: malformed JSON, wrong types, wrong content type and oversized bodies are 4xx with nothing written")
    func badInput() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let broken = try await http.send(.POST, "/v1/accounts:signUp?key=test-api-key", body: Data("{\"email\":".utf8))
            #expect(broken.status == 400)
            #expect(broken.errorMessage?.hasPrefix("Invalid JSON payload received.") == true)
            let wrongType = try await api.client("signUp", ["email": 42, "password": "secret-pass"])
            #expect(wrongType.status == 400)
            #expect((wrongType.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
            let xml = try await http.send(
                .POST, "/v1/accounts:signUp?key=test-api-key", body: Data("<a/>".utf8), headers: [("Content-Type", "application/xml")]
            )
            #expect(xml.status == 400)
            let huge = try await api.client("signUp", ["email": "big@example.com", "password": String(repeating: "x", count: 2 << 20)])
            #expect(huge.status == 413)
            let tooLong = try await api.client("signUp", ["email": "long@example.com", "password": String(repeating: "x", count: 5000)])
            #expect(tooLong.errorCode == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            // Nothing was written by any of them.
            let lookup = try await api.admin("lookup", ["email": ["big@example.com", "long@example.com"]])
            #expect(lookup.json["users"] == nil)
            // Unknown fields are ignored.
            let extra = try await api.client("signUp", ["email": "extra@example.com", "password": "secret-pass", "captchaResponse": "x"])
            #expect(extra.status == 200)
        }
    }

    @Test("checklist 7–11: sign-up tokens and errors, anonymous off, admin create")
    func signUp() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let reply = try await api.client(
                "signUp", ["email": "Alice@Example.com", "password": "secret-pass", "returnSecureToken": true])
            #expect(reply.status == 200)
            #expect(reply.string("expiresIn") == "3600")
            #expect(reply.string("email") == "alice@example.com")
            #expect(reply.string("kind") == "identitytoolkit#SignupNewUserResponse")
            let claims = Session(reply).claims
            #expect((claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String == "password")
            #expect(claims["email_verified"] as? Bool == false)
            #expect(claims["sid"] as? String != nil)

            #expect(try await api.client("signUp", ["email": "ALICE@EXAMPLE.COM", "password": "secret-pass"]).errorCode == "EMAIL_EXISTS")
            #expect(
                try await api.client("signUp", ["email": "b@example.com", "password": "12345"]).errorMessage
                    == "WEAK_PASSWORD : Password should be at least 6 characters")
            #expect(try await api.client("signUp", ["email": "x", "password": "secret-pass"]).errorCode == "INVALID_EMAIL")
            #expect(try await api.client("signUp", ["password": "secret-pass"]).errorCode == "MISSING_EMAIL")
            #expect(try await api.client("signUp", ["email": "c@example.com"]).errorCode == "MISSING_PASSWORD")
            #expect(try await api.client("signUp", [:]).errorCode == "ADMIN_ONLY_OPERATION")
            #expect(
                try await api.client("signUp", ["localId": "x", "email": "d@example.com", "password": "secret-pass"]).errorMessage
                    == "UNEXPECTED_PARAMETER : User ID")

            let created = try await http.post(
                "/v1/projects/demo-test/accounts",
                [
                    "localId": "chosen-uid", "email": "e@example.com", "password": "secret-pass", "phoneNumber": "+15551234567",
                    "emailVerified": true,
                ],
                headers: [API.admin]
            )
            #expect(created.status == 200)
            #expect(created.string("localId") == "chosen-uid")
            #expect(created.string("idToken") == nil)
            let duplicate = try await http.post("/v1/projects/demo-test/accounts", ["localId": "chosen-uid"], headers: [API.admin])
            #expect(duplicate.errorCode == "DUPLICATE_LOCAL_ID")
            let phone = try await http.post("/v1/projects/demo-test/accounts", ["phoneNumber": "+15551234567"], headers: [API.admin])
            #expect(phone.errorCode == "PHONE_NUMBER_EXISTS")
            let badPhone = try await http.post("/v1/projects/demo-test/accounts", ["phoneNumber": "+0"], headers: [API.admin])
            #expect(badPhone.errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
            #expect(try await api.signIn("e@example.com").localID == "chosen-uid")
        }
    }

    @Test("checklist 12–16: password sign-in, wrong password, unknown email, disabled after the password check")
    func signIn() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let signedIn = try await api.client("signInWithPassword", ["email": "ALICE@example.com", "password": "secret-pass"])
            #expect(signedIn.status == 200)
            #expect(signedIn.json["registered"] as? Bool == true)
            #expect(signedIn.string("localId") == alice.localID)
            let sessions = try await api.admin("listSessions", ["localId": alice.localID])
            #expect((sessions.json["sessions"] as? [[String: Any]])?.count == 2)

            #expect(
                try await api.client("signInWithPassword", ["email": "alice@example.com", "password": "nope-nope"]).errorCode
                    == "INVALID_PASSWORD")
            #expect(
                try await api.client("signInWithPassword", ["email": "who@example.com", "password": "nope-nope"]).errorCode
                    == "EMAIL_NOT_FOUND")
            #expect(try await api.client("signInWithPassword", ["email": "alice@example.com"]).errorCode == "MISSING_PASSWORD")
            #expect(try await api.client("signInWithPassword", ["password": "x"]).errorCode == "MISSING_EMAIL")

            _ = try await api.admin("update", ["localId": alice.localID, "disableUser": true])
            #expect(
                try await api.client("signInWithPassword", ["email": "alice@example.com", "password": "nope-nope"]).errorCode
                    == "INVALID_PASSWORD")
            #expect(
                try await api.client("signInWithPassword", ["email": "alice@example.com", "password": "secret-pass"]).errorCode
                    == "USER_DISABLED")

            // A user without a password (deleteProvider) gets INVALID_PASSWORD for any password.
            let bob = try await api.signUp("bob@example.com")
            _ = try await api.admin("update", ["localId": bob.localID, "deleteProvider": ["password"]])
            #expect(
                try await api.client("signInWithPassword", ["email": "bob@example.com", "password": "secret-pass"]).errorCode
                    == "INVALID_PASSWORD")
        }
    }

    @Test("§5: with enumeration protection, unknown email and wrong password look the same; discovery says nothing")
    func enumerationProtection() async throws {
        var configuration = testConfiguration()
        configuration.accounts.emailEnumerationProtection = true
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            #expect(
                try await api.client("signInWithPassword", ["email": "alice@example.com", "password": "nope-nope"]).errorCode
                    == "INVALID_LOGIN_CREDENTIALS")
            #expect(
                try await api.client("signInWithPassword", ["email": "who@example.com", "password": "nope-nope"]).errorCode
                    == "INVALID_LOGIN_CREDENTIALS")
            let discovery = try await api.client("createAuthUri", ["identifier": "alice@example.com", "continueUri": "http://localhost"])
            #expect(discovery.json["registered"] == nil)
            #expect(discovery.string("sessionId") != nil)
            let change = try await api.client("update", ["idToken": alice.idToken, "email": "new@example.com"])
            #expect(change.errorMessage == "OPERATION_NOT_ALLOWED : Please verify the new email before changing email.")
        }
    }

    @Test("two concurrent sign-ups of one email create one user; the other gets EMAIL_EXISTS")
    func concurrentSignUps() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let reply = try await api.client("signUp", ["email": "race@example.com", "password": "secret-pass"])
                        return reply.status == 200 ? "OK" : (reply.errorCode ?? "?")
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes.sorted() == ["EMAIL_EXISTS", "EMAIL_EXISTS", "EMAIL_EXISTS", "OK"])
        }
    }

    @Test("raising the argon2id cost upgrades a user's hash at their next sign-in, once; a wrong password changes nothing")
    func rehashOnSignIn() async throws {
        let database = try await TestDatabase.createMigrated()
        @Sendable func storedHash() async throws -> String {
            try await TestDatabase.withClient(database) { client in
                var phc = ""
                for hash in try await client.query("SELECT convert_from(hash, 'UTF8') FROM password_credentials").decode(String.self) {
                    phc = hash
                }
                return phc
            }
        }
        try await withServer(database: database) { http in _ = try await API(http: http).signUp("rehash@example.com") }
        #expect(try await storedHash().hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"))
        var stronger = testConfiguration()
        stronger.accounts.passwordHashParameters = .init(memoryKiB: 2048, iterations: 2)
        try await withServer(stronger, database: database) { http in
            let api = API(http: http)
            #expect(try await api.client("signInWithPassword", ["email": "rehash@example.com", "password": "wrong-pass"]).status == 400)
            #expect(try await storedHash().hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"), "a wrong password upgrades nothing")
            _ = try await api.signIn("rehash@example.com")
            let upgraded = try await storedHash()
            #expect(upgraded.hasPrefix("$argon2id$v=19$m=2048,t=2,p=1$"))
            _ = try await api.signIn("rehash@example.com")
            #expect(try await storedHash() == upgraded, "a current hash is kept")
        }
    }
}
