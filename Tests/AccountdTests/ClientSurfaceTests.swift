import AccountTesting
import Foundation
import NIOHTTP1
import Testing

@testable import accountd

/// federation-and-limits.md §D: the configuration the SDKs fetch, the methods Google has and this
/// server does not, and the legacy v3 names, over real HTTP.
@Suite("The rest of the client surface (§D)")
struct ClientSurfaceTests {
    static let key = "key=\(API.key)"

    @Test("D1: reCAPTCHA is never enforced, with a key present; a client key or admin bearer, no tenants")
    func recaptchaConfig() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            for path in [
                "/v2/recaptchaConfig?clientType=CLIENT_TYPE_WEB&version=RECAPTCHA_ENTERPRISE&\(Self.key)",
                "/identitytoolkit.googleapis.com/v2/recaptchaConfig?\(Self.key)",
            ] {
                let reply = try await http.get(path)
                #expect(reply.status == 200)
                #expect(reply.string("recaptchaKey") == "projects/demo-test/keys/accountd-recaptcha-off")
                let states = reply.json["recaptchaEnforcementState"] as? [[String: Any]] ?? []
                #expect(states.count == 2 && states.allSatisfy { $0["enforcementState"] as? String == "OFF" })
                #expect(reply.json["useSmsBotScore"] as? Bool == false)
            }
            #expect(try await http.get("/v2/recaptchaConfig").status == 403, "no key")
            #expect(try await http.get("/v2/recaptchaConfig", headers: [API.admin]).status == 200)
            #expect(try await http.get("/v2/recaptchaConfig?tenantId=t1&\(Self.key)").errorCode == "UNSUPPORTED_TENANT_OPERATION")
            #expect(try await http.get("/v2/recaptchaConfig?unknown=1&\(Self.key)").status == 200, "unknown parameters are ignored")
            // A reCAPTCHA token in a body changes nothing.
            let signUp = try await API(http: http).client(
                "signUp", ["email": "r@example.com", "password": "secret-pass", "captchaResponse": "x", "clientType": "CLIENT_TYPE_WEB"])
            #expect(signUp.status == 200)
        }
    }

    @Test("D2: the password policy is Firebase's OFF default; a raised minimum is ENFORCE and refused in production's words")
    func passwordPolicy() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let policy = try await http.get("/v2/passwordPolicy?\(Self.key)")
            #expect(policy.status == 200)
            #expect(policy.string("enforcementState") == "OFF" && policy.json["schemaVersion"] as? Int == 1)
            let strength = policy.json["customStrengthOptions"] as? [String: Any]
            #expect(strength?["minPasswordLength"] as? Int == 6 && strength?["maxPasswordLength"] as? Int == 4096)
            #expect((policy.json["allowedNonAlphanumericCharacters"] as? [String])?.contains("~") == true)
            #expect(
                try await API(http: http).client("signUp", ["email": "w@example.com", "password": "12345"]).errorCode == "WEAK_PASSWORD")
        }
        var strict = testConfiguration()
        strict.accounts.passwordMinimumLength = 8
        try await withServer(strict, database: database) { http in
            let policy = try await http.get("/v2/passwordPolicy?\(Self.key)")
            #expect(policy.string("enforcementState") == "ENFORCE")
            #expect((policy.json["customStrengthOptions"] as? [String: Any])?["minPasswordLength"] as? Int == 8)
            let short = try await API(http: http).client("signUp", ["email": "s@example.com", "password": "1234567"])
            #expect(
                short.errorMessage
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain at least 8 characters]")
            #expect(try await API(http: http).client("signUp", ["email": "s@example.com", "password": "12345678"]).status == 200)
        }
    }

    @Test("D3–D5: project configuration, reCAPTCHA parameters and the session-cookie keys")
    func projectConfiguration() async throws {
        var configuration = testConfiguration()
        configuration.projectNumber = "987654321"
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let client = try await http.get("/v1/projects?\(Self.key)")
            #expect(client.status == 200)
            #expect(client.string("projectId") == "987654321", "the project number, as Google answers")
            #expect(client.json["authorizedDomains"] as? [String] == ["localhost", "example.com"])
            #expect(client.json["allowPasswordUser"] == nil)
            let admin = try await http.get("/v1/projects", headers: [API.admin])
            #expect(admin.json["allowPasswordUser"] as? Bool == true && admin.json["enableAnonymousUser"] as? Bool == false)
            let params = try await http.get("/v1/recaptchaParams?\(Self.key)")
            #expect(params.string("recaptchaSiteKey") == "accountd-recaptcha-off")
            let cookieKeys = try await http.get("/v1/sessionCookiePublicKeys?\(Self.key)")
            let jwks = try await http.get("/.well-known/jwks.json")
            #expect(cookieKeys.status == 200)
            let kids = { (reply: TestHTTPClient.Reply) in
                ((reply.json["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String }
            }
            #expect(!kids(cookieKeys).isEmpty && kids(cookieKeys) == kids(jwks))
        }
    }

    @Test("D4: Google's methods that are not here answer OPERATION_NOT_ALLOWED after the caller checks; unknown names stay 404")
    func unsupportedMethods() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let phone = try await api.client("sendVerificationCode", ["phoneNumber": "+15555550100"])
            #expect(phone.status == 400 && phone.errorMessage == "OPERATION_NOT_ALLOWED : Phone sign-in is not enabled.")
            #expect(try await api.client("signInWithPhoneNumber", [:]).errorCode == "OPERATION_NOT_ALLOWED")
            #expect(
                try await api.client("signInWithGameCenter", [:]).errorMessage
                    == "OPERATION_NOT_ALLOWED : accounts:signInWithGameCenter is not supported by this server.")
            for path in ["/v2/accounts/mfaSignIn:start", "/v2/accounts/passkeyEnrollment:finalize", "/v2/accounts:revokeToken"] {
                #expect(try await http.post("\(path)?\(Self.key)", [:]).errorCode == "OPERATION_NOT_ALLOWED", "\(path)")
            }
            // Admin-only ones still need the bearer.
            #expect(try await http.get("/v2/projects/demo-test/config?\(Self.key)").status == 403)
            let config = try await http.get("/v2/projects/demo-test/config", headers: [API.admin])
            #expect(config.status == 200 && config.string("name") == "projects/demo-test/config")
            #expect(
                try await http.post("/v2/projects/demo-test/inboundSamlConfigs/saml.x", [:], headers: [API.admin]).errorCode
                    == "OPERATION_NOT_ALLOWED")
            #expect(
                try await http.get("/v2/projects/demo-test/tenants/t1", headers: [API.admin]).errorCode == "UNSUPPORTED_TENANT_OPERATION")
            #expect(try await api.client("fooBar", [:]).status == 404)
            #expect(try await http.get("/v2/fooBar?\(Self.key)").status == 404)
        }
    }

    @Test("D5: the legacy v3 names pyrebase4 and firebase-rest-api call: sign-up, sign-in, lookup, verification, reset, update, delete")
    func legacyNames() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let v3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
            func call(_ name: String, _ body: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
                try await http.post("\(v3)\(name)?\(Self.key)", body)
            }
            let signUp = try await call("signupNewUser", ["email": "py@example.com", "password": "secret-pass", "returnSecureToken": true])
            #expect(signUp.status == 200)
            let signIn = try await call(
                "verifyPassword", ["email": "py@example.com", "password": "secret-pass", "returnSecureToken": true])
            #expect(signIn.status == 200)
            let idToken = signIn.string("idToken") ?? ""
            let info = try await call("getAccountInfo", ["idToken": idToken])
            #expect((info.json["users"] as? [[String: Any]])?.first?["email"] as? String == "py@example.com")
            #expect(try await call("getOobConfirmationCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken]).status == 200)
            #expect(try await call("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "py@example.com"]).status == 200)
            #expect(try await call("setAccountInfo", ["idToken": idToken, "displayName": "Py"]).string("displayName") == "Py")
            #expect(
                try await call("verifyPassword", ["email": "py@example.com", "password": "wrong-pass"]).errorCode == "INVALID_PASSWORD")
            #expect(try await http.get("/identitytoolkit/v3/relyingparty/getProjectConfig?\(Self.key)").string("projectId") == "demo-test")
            #expect(try await http.get("\(v3)publicKeys").status == 200)
            #expect(try await call("signOutUser", [:]).errorCode == "OPERATION_NOT_ALLOWED")
            #expect(try await call("verifyAssertion", [:]).errorCode == "MISSING_REQUEST_URI", "signInWithIdp under its v3 name")
            #expect(try await call("deleteAccount", ["idToken": idToken]).status == 200)
            #expect(
                try await call("verifyPassword", ["email": "py@example.com", "password": "secret-pass"]).errorCode == "EMAIL_NOT_FOUND")
            #expect(try await call("noSuchMethod", [:]).status == 404)
        }
    }

    @Test("D6: v3 downloadAccount and uploadAccount name their project in the body, admins only")
    func legacyTransfer() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let v3 = "/identitytoolkit/v3/relyingparty/"
            let upload = try await http.post(
                "\(v3)uploadAccount", ["targetProjectId": "demo-test", "users": [["localId": "legacy-1", "email": "l1@example.com"]]],
                headers: [API.admin])
            #expect(upload.status == 200, "\(String(decoding: upload.body, as: UTF8.self))")
            let missing = try await http.post("\(v3)downloadAccount", ["maxResults": 10], headers: [API.admin])
            #expect(missing.errorCode == "INSUFFICIENT_PERMISSION")
            let other = try await http.post("\(v3)downloadAccount", ["targetProjectId": "other"], headers: [API.admin])
            #expect(other.status == 403)
            let client = try await http.post("\(v3)downloadAccount?\(Self.key)", ["targetProjectId": "demo-test"])
            #expect(client.errorCode == "INSUFFICIENT_PERMISSION")
            let download = try await http.post(
                "\(v3)downloadAccount", ["targetProjectId": "demo-test", "maxResults": 10], headers: [API.admin])
            #expect((download.json["users"] as? [[String: Any]])?.map { $0["localId"] as? String } == ["legacy-1"])
        }
    }
}
