import AccountCore
import Foundation
import Testing

@testable import AccountAPI

@Suite("URL forms of identity-toolkit.md §1.1")
struct APIPathTests {
    @Test("bare, host-prefixed and project-scoped spellings resolve to one RPC")
    func spellings() {
        #expect(APIPath("/v1/accounts:signUp") == .rpc(name: "signUp", project: nil))
        #expect(APIPath("/identitytoolkit.googleapis.com/v1/accounts:signUp") == .rpc(name: "signUp", project: nil))
        #expect(APIPath("/v1/projects/p1/accounts:lookup") == .rpc(name: "lookup", project: "p1"))
        #expect(APIPath("/identitytoolkit.googleapis.com/v1/projects/p1/accounts:batchGet") == .rpc(name: "batchGet", project: "p1"))
        #expect(APIPath("/v1/projects/p1/accounts") == .rpc(name: "signUp", project: "p1"))
        #expect(APIPath("/v1/projects/p1:createSessionCookie") == .rpc(name: "createSessionCookie", project: "p1"))
        #expect(APIPath("/v1/token") == .token)
        #expect(APIPath("/securetoken.googleapis.com/v1/token") == .token)
        #expect(APIPath("/v1/projects/p1/tenants/t/accounts:lookup") == .tenant)
        #expect(APIPath("/healthz") == .fixed("/healthz"))
        #expect(
            APIPath("/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com")
                == .fixed("/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"))
    }

    @Test("v2, the v1 configuration routes and legacy v3 names (federation-and-limits.md §D)")
    func otherVersions() {
        #expect(APIPath("/v2/recaptchaConfig") == .rpc(name: "v2/recaptchaConfig", project: nil))
        #expect(APIPath("/identitytoolkit.googleapis.com/v2/passwordPolicy") == .rpc(name: "v2/passwordPolicy", project: nil))
        #expect(APIPath("/v2/accounts/mfaSignIn:start") == .rpc(name: "v2/accounts/mfaSignIn:start", project: nil))
        #expect(APIPath("/v2/projects/p1/config") == .rpc(name: "v2/config", project: "p1"))
        #expect(
            APIPath("/v2/projects/p1/inboundSamlConfigs/saml.x") == .rpc(name: "v2/inboundSamlConfigs", project: "p1", resource: "saml.x"))
        #expect(APIPath("/v2/projects/p1/oauthIdpConfigs/oidc.a") == .rpc(name: "v2/oauthIdpConfigs", project: "p1", resource: "oidc.a"))
        #expect(APIPath("/v2/projects/p1/oauthIdpConfigs/a/b") == .unknown)
        #expect(APIPath("/v2/projects/p1/tenants/t1") == .tenant)
        #expect(APIPath("/v1/projects") == .rpc(name: "v1/projects", project: nil))
        #expect(APIPath("/identitytoolkit.googleapis.com/v1/recaptchaParams") == .rpc(name: "v1/recaptchaParams", project: nil))
        #expect(
            APIPath("/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPassword") == .rpc(name: "signInWithPassword", project: nil))
        #expect(APIPath("/identitytoolkit/v3/relyingparty/getProjectConfig") == .rpc(name: "v1/projects", project: nil))
        #expect(APIPath("/identitytoolkit/v3/relyingparty/uploadAccount") == .rpc(name: "v3/uploadAccount", project: nil))
        #expect(
            APIPath("/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys")
                == .fixed("/identitytoolkit/v3/relyingparty/publicKeys"))
        #expect(APIPath("/v2/projects/p1") == .unknown)
    }

    @Test("malformed RPC paths are unknown")
    func unknown() {
        #expect(APIPath("/v1/accounts:") == .unknown)
        #expect(APIPath("/v1/accounts:sign/Up") == .unknown)
        #expect(APIPath("/v1/projects//accounts:lookup") == .unknown)
        #expect(APIPath("/v1/projects/p1/accounts:lookup/extra") == .unknown)
        #expect(APIPath("/v1/projects/p1:somethingElse") == .unknown)
    }
}

@Suite("Lenient request bodies of identity-toolkit.md §1.2")
struct RPCBodyTests {
    @Test("camelCase or snake_case, numbers as strings, booleans as strings")
    func leniency() throws {
        let body = try RPCBody(
            json: Data(
                #"{"refresh_token":"r","validSince":"1700000000","createdAt":1700000000000,"returnSecureToken":"true","x":null}"#.utf8))
        #expect(try body.string("refreshToken") == "r")
        #expect(try body.int64("validSince") == 1_700_000_000)
        #expect(try body.int64("createdAt") == 1_700_000_000_000)
        #expect(try body.bool("returnSecureToken") == true)
        #expect(body.has("x") == false)
    }

    @Test("type violations are INVALID_ARGUMENT naming the field")
    func typeViolations() throws {
        let body = try RPCBody(json: Data(#"{"email":true,"validSince":"soon","localId":[1]}"#.utf8))
        #expect(throws: APIError.self) { try body.string("email") }
        #expect(throws: APIError.self) { try body.int64("validSince") }
        #expect(throws: APIError.self) { try body.strings("localId") }
        do {
            _ = try body.int64("validSince")
        } catch {
            #expect(error.status == "INVALID_ARGUMENT")
            #expect(error.message.contains("validSince"))
        }
    }

    @Test("bad JSON and non-object roots are refused; an empty body is an empty object")
    func badJSON() throws {
        #expect(throws: APIError.self) { try RPCBody(json: Data("{".utf8)) }
        #expect(throws: APIError.self) { try RPCBody(json: Data("[1]".utf8)) }
        #expect(try RPCBody(json: Data()).fields.isEmpty)
    }

    @Test("a field is found under its camelCase or snake_case name; null counts as absent")
    func fieldNames() throws {
        #expect(RPCBody.snakeCase("returnSecureToken") == "return_secure_token")
        #expect(RPCBody.snakeCase("idToken") == "id_token")
        #expect(RPCBody.snakeCase("email") == "email")
        #expect(RPCBody.snakeCase("") == "")
        #expect(RPCBody.snakeCase("oobCode") == "oob_code")
        let body = RPCBody(fields: [
            "return_secure_token": .bool(true), "localId": .string("u1"), "local_id": .string("ignored"), "email": .null,
            "display_name": .string("Ann"),
        ])
        #expect(try body.bool("returnSecureToken") == true)
        #expect(try body.string("localId") == "u1", "the camelCase spelling wins")
        #expect(try body.string("displayName") == "Ann")
        #expect(try body.string("email") == nil)
        #expect(!body.has("email") && !body.has("phoneNumber"))
    }

    @Test("form bodies decode percent escapes and plus signs")
    func form() throws {
        let body = RPCBody(form: Data("grant_type=refresh_token&refresh_token=a%2Bb+c".utf8))
        #expect(try body.string("grantType") == "refresh_token")
        #expect(try body.string("refresh_token") == "a+b c")
    }

    @Test(
        "a form field decodes as Foundation's removingPercentEncoding did, and malformed escapes or bytes that are not UTF-8 stay as sent",
        arguments: [
            "plain", "a+b", "a%2Bb", "%E2%82%AC+euro", "%e2%82%ac", "100%", "%zz", "%4", "bad%FFutf8", "%00nul", "+++", "",
            "%2", "a%2Fb%3Dc%26d", "\u{00e9}t\u{00e9}", "%C3%A9+%C3",
        ])
    func formField(_ encoded: String) {
        let spaced = encoded.replacingOccurrences(of: "+", with: " ")
        let decoded = spaced.removingPercentEncoding ?? encoded
        #expect(FormEncoding.decode(encoded[...].utf8) == decoded)
        // A federated sign-in's postBody: pairs in order, one without a name skipped, one without `=` empty.
        let pairs = FormEncoding.pairs("f=\(encoded)&=skipped&g&f%3D=\(encoded)"[...].utf8)
        #expect(pairs.map { "\($0.name)|\($0.value)" } == ["f|\(decoded)", "g|", "f=|\(decoded)"])
        // The action handler's links keep their spaces when malformed, as they always did.
        #expect(ActionHandler.formFields("f=\(encoded)")["f"] == spaced.removingPercentEncoding ?? spaced)
    }
}

@Suite("Authorization header (identity-toolkit.md §1.3)")
struct BearerTokenTests {
    @Test("the Bearer scheme in any case, blanks trimmed; anything else is not a bearer token")
    func bearer() {
        #expect(APIResponder.bearerToken("Bearer abc") == "abc")
        #expect(APIResponder.bearerToken("bEaReR  abc \t") == "abc")
        #expect(APIResponder.bearerToken("Bearer ") == "")
        #expect(APIResponder.bearerToken("Basic abc") == nil)
        #expect(APIResponder.bearerToken("Bearerabc") == nil)
        #expect(APIResponder.bearerToken("Bearér abc") == nil)
        #expect(APIResponder.bearerToken("") == nil)
    }
}
