import AccountCore
import AccountPostgres
import AccountTesting
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

@testable import AccountAPI
@testable import accountd

/// Issue 7: the default email action handler page at `/__/auth/action`, over real HTTP.
@Suite("Email action handler page")
struct ActionHandlerTests {
    static let formHeaders = [("Content-Type", "application/x-www-form-urlencoded")]

    /// The path and query of an action link (the link's host is the configured public URL).
    static func path(_ link: String?) throws -> String {
        let link = try #require(link)
        let start = try #require(link.range(of: "/__/auth/action"))
        return String(link[start.lowerBound...])
    }

    /// An admin-made link of `requestType` for `email`.
    static func link(_ api: API, _ requestType: String, _ email: String, _ extra: [String: any Sendable] = [:]) async throws -> (
        code: String, path: String
    ) {
        var body: [String: any Sendable] = ["requestType": requestType, "email": email, "returnOobLink": true]
        body.merge(extra) { _, new in new }
        let reply = try await api.admin("sendOobCode", body)
        let code = try #require(reply.string("oobCode"), "\(String(decoding: reply.body, as: UTF8.self))")
        return (code, try path(reply.string("oobLink")))
    }

    static func html(_ reply: TestHTTPClient.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// The value of the hidden field `name` in `html`.
    static func field(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        guard let end = html[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(html[start.upperBound..<end])
    }

    static func form(_ fields: [(String, String)]) -> Data {
        Data(fields.map { "\($0.0)=\(ActionCodeSettings.formEncode($0.1))" }.joined(separator: "&").utf8)
    }

    /// Every page carries the security headers and is HTML.
    static func expectHeaders(_ reply: TestHTTPClient.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.header("Content-Type") == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        #expect(
            reply.header("Content-Security-Policy")
                == "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: https:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            sourceLocation: sourceLocation
        )
        #expect(reply.header("Referrer-Policy") == "no-referrer", sourceLocation: sourceLocation)
        #expect(reply.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
        #expect(reply.header("X-Content-Type-Options") == "nosniff", sourceLocation: sourceLocation)
    }

    static func emailVerified(_ api: API, _ localID: String) async throws -> Bool? {
        let users = try await api.admin("lookup", ["localId": [localID]]).json["users"] as? [[String: Any]]
        return users?.first?["emailVerified"] as? Bool
    }

    @Test("HMAC-SHA256 matches RFC 4231 test cases 1, 2 and 6")
    func hmacVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(
            hex(ActionPageCSRF.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        )
        #expect(
            hex(ActionPageCSRF.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        )
        #expect(
            hex(
                ActionPageCSRF.hmacSHA256(
                    key: [UInt8](repeating: 0xaa, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
                )
            ) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
        #expect(hex(ActionPageCSRF.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let csrf = ActionPageCSRF(key: [UInt8](repeating: 1, count: 32))
        let token = csrf.token(purpose: "resetPassword", value: "abc")
        #expect(csrf.verify(token, purpose: "resetPassword", value: "abc"))
        #expect(!csrf.verify(token, purpose: "resetPassword", value: "abd"))
        #expect(!csrf.verify(token, purpose: "sendPasswordReset", value: "abc"))
        #expect(!csrf.verify(nil, purpose: "resetPassword", value: "abc"))
    }

    @Test("the renderer escapes every value and reads an operator's templates folder")
    func rendering() throws {
        #expect(
            ActionPageRenderer.render("<b>{{a}}</b>{{{b}}}{{missing}}", values: ["a": "<script>\"x\"&'"], raw: ["b": "<i>ok</i>"])
                == "<b>&lt;script&gt;&quot;x&quot;&amp;&#39;</b><i>ok</i>"
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("action-templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "<html lang=\"{{lang}}\"><h2>{{productName}}</h2>{{{content}}}</html>".write(
            to: folder.appendingPathComponent("layout.html"), atomically: true, encoding: .utf8
        )
        try #"{"continue": "Weiter"}"#.write(to: folder.appendingPathComponent("messages.de.json"), atomically: true, encoding: .utf8)
        let renderer = try ActionPageRenderer(productName: "Acme", logoURL: "javascript:alert(1)", templatesDirectory: folder.path)
        #expect(renderer.logoURL == nil)
        #expect(renderer.messages.language(for: "de-AT") == "de")
        #expect(renderer.messages.text("continue", "de") == "Weiter")
        #expect(renderer.messages.text("reset.title", "de") == "Reset your password")
        #expect(renderer.messages.language(for: "fr_CA") == "fr")
        #expect(renderer.messages.language(for: "xx") == "en")
    }

    /// The text of an escaped attribute value.
    static func unescape(_ value: String) -> String {
        var text = value
        for (entity, character) in [("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text
    }

    /// POSTs the confirmation form of `page` (as a person's click does) and returns the answer.
    static func confirm(_ http: TestHTTPClient, _ page: TestHTTPClient.Reply) async throws -> TestHTTPClient.Reply {
        let html = Self.html(page)
        #expect(html.contains("action=\"/__/auth/action/apply\""))
        var fields: [(String, String)] = []
        for name in ["oobCode", "csrf", "apiKey", "lang", "continueUrl"] {
            if let value = Self.field(name, in: html) { fields.append((name, Self.unescape(value))) }
        }
        return try await http.send(.POST, "/__/auth/action/apply", body: Self.form(fields), headers: Self.formHeaders)
    }

    @Test("verifyEmail: the link asks first, only the form's POST verifies, a second use gets the invalid page")
    func verifyEmail() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            #expect(try await Self.emailVerified(api, alice.localID) == false)
            let (code, path) = try await Self.link(
                api, "VERIFY_EMAIL", "alice@example.com", ["continueUrl": "https://app.example.com/home"])
            // A HEAD or a GET (mail scanners, link previews) spends nothing.
            #expect(try await http.send(.HEAD, path).status == 200)
            let page = try await http.get(path)
            #expect(page.status == 200)
            Self.expectHeaders(page)
            #expect(Self.html(page).contains("Verify your email"))
            #expect(Self.html(page).contains("alice@example.com"))
            #expect(!Self.html(page).contains("<script"))
            #expect(try await http.get(path).status == 200, "fetching the link again still asks")
            #expect(try await Self.emailVerified(api, alice.localID) == false)

            let reply = try await Self.confirm(http, page)
            let html = Self.html(reply)
            #expect(reply.status == 200)
            Self.expectHeaders(reply)
            #expect(html.contains("Your email has been verified"))
            #expect(html.contains("alice@example.com"))
            #expect(html.contains("<html lang=\"en\">"))
            #expect(html.contains("name=\"viewport\""))
            #expect(html.contains("href=\"https://app.example.com/home\""))
            #expect(!html.contains(code))
            #expect(!html.contains("<script"))
            #expect(try await Self.emailVerified(api, alice.localID) == true)

            let again = try await http.get(path)
            #expect(again.status == 400)
            Self.expectHeaders(again)
            #expect(Self.html(again).contains("This link is no longer valid"))
            #expect(!Self.html(again).contains(code))
            #expect(try await Self.confirm(http, page).status == 400, "the form of a spent code applies nothing")
        }
    }

    @Test("resetPassword: check, form with the policy, CSRF refusals, weak password, reset, sign in over the RPC")
    func resetPassword() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            _ = try await api.signUp("bob@example.com", "old-password")
            let (code, path) = try await Self.link(
                api, "PASSWORD_RESET", "bob@example.com", ["continueUrl": "https://app.example.com/signin"])
            let page = try await http.get(path)
            let html = Self.html(page)
            #expect(page.status == 200)
            Self.expectHeaders(page)
            #expect(html.contains("Reset your password"))
            #expect(html.contains("Use at least 6 characters."))
            #expect(html.contains("<label for=\"new-password\">New password</label>"))
            #expect(html.contains("id=\"new-password\" name=\"newPassword\" type=\"password\""))
            #expect(html.contains("action=\"/__/auth/action/resetPassword\""))
            // The code appears once: the hidden field that submits it.
            #expect(html.components(separatedBy: code).count == 2)
            #expect(Self.field("oobCode", in: html) == code)
            let token = try #require(Self.field("csrf", in: html))
            #expect(!token.contains(code))

            // Opening the form does not spend the code; the RPC still sees it.
            #expect(try await api.client("resetPassword", ["oobCode": code]).string("requestType") == "PASSWORD_RESET")

            let post = "/__/auth/action/resetPassword"
            let missing = try await http.send(
                .POST, post, body: Self.form([("oobCode", code), ("newPassword", "new-password")]), headers: Self.formHeaders)
            #expect(missing.status == 403)
            Self.expectHeaders(missing)
            #expect(Self.html(missing).contains("This form could not be accepted"))
            let wrong = try await http.send(
                .POST, post, body: Self.form([("oobCode", code), ("csrf", String(token.reversed())), ("newPassword", "new-password")]),
                headers: Self.formHeaders
            )
            #expect(wrong.status == 403)
            #expect(!Self.html(wrong).contains(code))
            // A token for another code is refused too (another user's: a newer code of Bob's would
            // retire this one).
            _ = try await api.signUp("carol@example.com", "old-password")
            let (otherCode, _) = try await Self.link(api, "PASSWORD_RESET", "carol@example.com")
            let swapped = try await http.send(
                .POST, post, body: Self.form([("oobCode", otherCode), ("csrf", token), ("newPassword", "new-password")]),
                headers: Self.formHeaders
            )
            #expect(swapped.status == 403)
            _ = try await api.signIn("bob@example.com", "old-password")

            let weak = try await http.send(
                .POST, post,
                body: Self.form([
                    ("oobCode", code), ("csrf", token), ("newPassword", "short"), ("continueUrl", "https://app.example.com/signin"),
                ]),
                headers: Self.formHeaders
            )
            #expect(weak.status == 400)
            #expect(Self.html(weak).contains("This password is too short"))
            #expect(Self.html(weak).contains("role=\"alert\""))

            let done = try await http.send(
                .POST, post,
                body: Self.form([
                    ("oobCode", code), ("csrf", token), ("newPassword", "brand-new-password"),
                    ("continueUrl", "https://app.example.com/signin"),
                    ("lang", "en"),
                ]),
                headers: Self.formHeaders
            )
            #expect(done.status == 200)
            Self.expectHeaders(done)
            #expect(Self.html(done).contains("Your password has been changed"))
            #expect(Self.html(done).contains("href=\"https://app.example.com/signin\""))
            #expect(!Self.html(done).contains(code))
            _ = try await api.signIn("bob@example.com", "brand-new-password")
            #expect(try await api.client("signInWithPassword", ["email": "bob@example.com", "password": "old-password"]).status == 400)

            let used = try await http.get(path)
            #expect(used.status == 400)
            #expect(Self.html(used).contains("This link is no longer valid"))
        }
    }

    @Test("the page speaks French for lang=fr")
    func french() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            _ = try await api.signUp("chloe@example.com")
            let (_, path) = try await Self.link(api, "PASSWORD_RESET", "chloe@example.com")
            let reply = try await http.get(path.replacingOccurrences(of: "lang=en", with: "lang=fr-FR"))
            let html = Self.html(reply)
            #expect(reply.status == 200)
            #expect(html.contains("<html lang=\"fr\">"))
            #expect(html.contains("Réinitialiser votre mot de passe"))
            #expect(html.contains("Utilisez au moins 6 caractères."))
            #expect(Self.field("lang", in: html) == "fr-FR")
            let bad = try await http.get("/__/auth/action?mode=nope&oobCode=x&lang=fr")
            #expect(bad.status == 400)
            #expect(Self.html(bad).contains("Ce lien ne peut pas être utilisé ici"))
        }
    }

    @Test("verifyAndChangeEmail applies the change; the recover link restores the address and offers a reset")
    func changeAndRecover() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let dana = try await api.signUp("dana@example.com")
            let (code, path) = try await Self.link(api, "VERIFY_AND_CHANGE_EMAIL", "dana@example.com", ["newEmail": "dana.new@example.com"])
            let asked = try await http.get(path)
            #expect(Self.html(asked).contains("Change your sign-in email"))
            #expect(Self.html(asked).contains("dana.new@example.com"))
            let unchanged = try await api.admin("lookup", ["localId": [dana.localID]]).json["users"] as? [[String: Any]]
            #expect(unchanged?.first?["email"] as? String == "dana@example.com", "a GET changes nothing")
            // The form's token is bound to its code: another code's token is refused.
            let forgedApply = try await http.send(
                .POST, "/__/auth/action/apply",
                body: Self.form([
                    ("oobCode", code), ("csrf", ActionPageCSRF(key: Array(repeating: 1, count: 32)).token(purpose: "apply", value: code)),
                ]),
                headers: Self.formHeaders)
            #expect(forgedApply.status == 403)
            let changed = try await Self.confirm(http, asked)
            #expect(changed.status == 200)
            Self.expectHeaders(changed)
            #expect(Self.html(changed).contains("Your email has been changed"))
            #expect(Self.html(changed).contains("dana.new@example.com"))
            #expect(!Self.html(changed).contains(code))

            let body = try await TestDatabase.withClient(database) { client in
                var text = ""
                for value in try await client.query("SELECT body_text FROM email_outbox WHERE kind = 'RECOVER_EMAIL'").decode(
                    String.self)
                {
                    text = value
                }
                return text
            }
            let link = try #require(body.split(whereSeparator: \.isWhitespace).first { $0.contains("mode=recoverEmail") })
            let recoverPath = try Self.path(String(link))
            let recoverCode = try #require(Self.formFields(recoverPath)["oobCode"])
            let recoverPage = try await http.get(recoverPath)
            #expect(Self.html(recoverPage).contains("Restore your sign-in email"))
            let recovered = try await Self.confirm(http, recoverPage)
            let html = Self.html(recovered)
            #expect(recovered.status == 200)
            Self.expectHeaders(recovered)
            #expect(html.contains("Your sign-in email has been restored"))
            #expect(html.contains("dana@example.com"))
            #expect(html.contains("action=\"/__/auth/action/sendPasswordReset\""))
            #expect(!html.contains(recoverCode))
            let users = try await api.admin("lookup", ["localId": [dana.localID]]).json["users"] as? [[String: Any]]
            #expect(users?.first?["email"] as? String == "dana@example.com")

            let token = try #require(Self.field("csrf", in: html))
            let forged = try await http.send(
                .POST, "/__/auth/action/sendPasswordReset", body: Self.form([("email", "someone@example.com"), ("csrf", token)]),
                headers: Self.formHeaders
            )
            #expect(forged.status == 403)
            let sent = try await http.send(
                .POST, "/__/auth/action/sendPasswordReset", body: Self.form([("email", "dana@example.com"), ("csrf", token)]),
                headers: Self.formHeaders
            )
            #expect(sent.status == 200)
            #expect(Self.html(sent).contains("Check your inbox"))
            let resets = try await TestDatabase.withClient(database) { client in
                var count = 0
                for n in try await client.query(
                    "SELECT count(*)::int FROM email_outbox WHERE kind = 'PASSWORD_RESET' AND recipient = 'dana@example.com'"
                ).decode(Int.self) { count = n }
                return count
            }
            #expect(resets == 1)
        }
    }

    @Test("signIn forwards to an authorized continue URL with the link parameters, never elsewhere")
    func signIn() async throws {
        let database = try await TestDatabase.createMigrated()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await withServer(database: database) { server in
                let api = API(http: server)
                let http = TestHTTPClient(port: Int(server.baseURL.split(separator: ":").last!)!, client: client)
                let (code, path) = try await Self.link(
                    api, "EMAIL_SIGNIN", "erin@example.com",
                    ["continueUrl": "https://app.example.com/finish?step=2", "canHandleCodeInApp": true]
                )
                let reply = try await http.get(path)
                #expect(reply.status == 303)
                #expect(reply.header("Referrer-Policy") == "no-referrer")
                #expect(reply.header("Cache-Control") == "no-store")
                #expect(
                    reply.header("Location")
                        == "https://app.example.com/finish?step=2&mode=signIn&oobCode=\(code)&apiKey=test-api-key&lang=en"
                )
                // The code is not spent: the app completes the sign-in over the RPC.
                let signedIn = try await api.client("signInWithEmailLink", ["email": "erin@example.com", "oobCode": code])
                #expect(signedIn.status == 200)

                let (code2, path2) = try await Self.link(
                    api, "EMAIL_SIGNIN", "erin@example.com", ["continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true]
                )
                let tampered = path2.replacingOccurrences(
                    of: "continueUrl=https%3A%2F%2Fapp.example.com%2Ffinish", with: "continueUrl=https%3A%2F%2Fevil.example.net%2Fsteal"
                )
                #expect(tampered != path2)
                let refused = try await http.get(tampered)
                #expect(refused.status == 400)
                #expect(refused.header("Location") == nil)
                Self.expectHeaders(refused)
                #expect(Self.html(refused).contains("This link points somewhere it should not"))
                #expect(!Self.html(refused).contains(code2))
                let noContinue = try await http.get("/__/auth/action?mode=signIn&oobCode=\(code2)&apiKey=test-api-key")
                #expect(noContinue.status == 400)
                #expect(noContinue.header("Location") == nil)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test("error pages: unknown mode, missing or bad code, expired, disabled, unauthorized continue URL")
    func errorPages() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let frank = try await api.signUp("frank@example.com")
            let (code, path) = try await Self.link(api, "PASSWORD_RESET", "frank@example.com")
            func check(_ path: String, _ status: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let reply = try await http.get(path)
                #expect(reply.status == status, sourceLocation: sourceLocation)
                Self.expectHeaders(reply, sourceLocation: sourceLocation)
                #expect(Self.html(reply).contains(text), sourceLocation: sourceLocation)
                // Only the reset form carries the code, once, in its hidden field.
                #expect(Self.html(reply).components(separatedBy: code).count == (status == 200 ? 2 : 1), sourceLocation: sourceLocation)
                #expect(Self.html(reply).contains("<h1 id=\"page-title\">"), sourceLocation: sourceLocation)
            }
            try await check("/__/auth/action?mode=deleteEverything&oobCode=\(code)", 400, "This link cannot be used here")
            try await check("/__/auth/action", 400, "This link cannot be used here")
            try await check("/__/auth/action?mode=resetPassword", 400, "This link is incomplete")
            try await check("/__/auth/action?mode=resetPassword&oobCode=not-a-real-code", 400, "This link is no longer valid")
            // A code of another kind is not accepted under a different mode.
            try await check(
                path.replacingOccurrences(of: "mode=resetPassword", with: "mode=verifyEmail"), 400, "This link is no longer valid")
            try await check(path + "&continueUrl=https%3A%2F%2Fevil.example.net%2F", 400, "This link points somewhere it should not")

            _ = try await api.admin("update", ["localId": frank.localID, "disableUser": true])
            try await check(path, 403, "This account has been disabled")
            _ = try await api.admin("update", ["localId": frank.localID, "disableUser": false])
            try await check(path, 200, "Reset your password")

            try await TestDatabase.withClient(database) { client in
                _ = try await client.query("UPDATE action_codes SET expires_at = now() - interval '1 minute'")
            }
            try await check(path, 410, "This link has expired")
        }
    }

    static func formFields(_ path: String) -> [String: String] {
        ActionHandler.formFields(String(path.split(separator: "?", maxSplits: 1).last ?? ""))
    }
}
