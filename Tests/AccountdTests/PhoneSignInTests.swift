import AccountCore
import AccountTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOHTTP1
import Synchronization
import Testing

@testable import accountd

/// Phone sign-in over real HTTP against PostgreSQL (mfa-phone-tenants.md §A.12): demo projects
/// read codes from the test inbox; the production configuration sends them to a signed webhook.
@Suite("Phone sign-in (mfa-phone-tenants.md §A)")
struct PhoneSignInTests {
    static let number = "+15555550100"

    static func demoConfiguration() -> Configuration {
        var configuration = testConfiguration()
        configuration.phone.testInbox = true
        configuration.phone.transport = .log
        return configuration
    }

    /// PATCHes the configuration resource.
    static func patchConfig(_ http: TestHTTPClient, project: String = "demo-test", mask: String, _ body: [String: any Sendable])
        async throws -> TestHTTPClient.Reply
    {
        try await http.admin.send(
            .PATCH, "/v2/projects/\(project)/config?updateMask=\(mask)", body: try JSONSerialization.data(withJSONObject: body),
            headers: [("Content-Type", "application/json"), API.admin])
    }

    static func enablePhone(_ http: TestHTTPClient, project: String = "demo-test", testNumbers: [String: String] = [:]) async throws {
        let reply = try await patchConfig(
            http, project: project, mask: "signIn.phoneNumber.enabled,signIn.phoneNumber.testPhoneNumbers",
            ["signIn": ["phoneNumber": ["enabled": true, "testPhoneNumbers": testNumbers] as [String: any Sendable]]])
        guard reply.status == 200 else { throw TestDatabaseError("enabling phone sign-in: \(String(decoding: reply.body, as: UTF8.self))") }
    }

    /// Sends a code and reads it from the demo inbox: (sessionInfo, code).
    static func code(_ api: API, _ number: String = number) async throws -> (String, String) {
        let sent = try await api.client("sendVerificationCode", ["phoneNumber": number])
        let sessionInfo = try #require(sent.string("sessionInfo"), "\(String(decoding: sent.body, as: UTF8.self))")
        let inbox = try await api.http.get("/emulator/v1/projects/demo-test/verificationCodes")
        let codes = try #require(inbox.json["verificationCodes"] as? [[String: String]])
        let entry = try #require(codes.first { $0["sessionInfo"] == sessionInfo })
        return (sessionInfo, try #require(entry["code"]))
    }

    static func complete(_ api: API, _ body: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
        try await api.client("signInWithPhoneNumber", body)
    }

    @Test("P2, P3, P5, P10: numbers checked, a code signs up once, missing parts named, REAUTH needs the account")
    func signUpOnce() async throws {
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            #expect(
                try await api.client("sendVerificationCode", ["phoneNumber": Self.number]).errorMessage
                    == "OPERATION_NOT_ALLOWED : Phone sign-in is not enabled.")
            try await Self.enablePhone(http)
            for bad in ["invalid", "0015555550100"] {
                #expect(
                    try await api.client("sendVerificationCode", ["phoneNumber": bad]).errorMessage
                        == "INVALID_PHONE_NUMBER : Invalid format.")
            }
            #expect(try await api.client("sendVerificationCode", [:]).errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
            #expect(
                try await api.client("sendVerificationCode", ["phoneNumber": "+123"]).errorMessage == "INVALID_PHONE_NUMBER : TOO_SHORT")
            #expect(try await Self.complete(api, ["code": "123456"]).errorCode == "MISSING_SESSION_INFO")
            #expect(try await Self.complete(api, ["sessionInfo": "x"]).errorCode == "MISSING_CODE")

            let (reauthSession, reauthCode) = try await Self.code(api)
            let reauth = try await Self.complete(api, ["sessionInfo": reauthSession, "code": reauthCode, "operation": "REAUTH"])
            #expect(reauth.errorCode == "USER_NOT_FOUND")

            let (sessionInfo, code) = try await Self.code(api, "+1 (555) 555-0100")
            let signedUp = try await Self.complete(api, ["sessionInfo": sessionInfo, "code": code])
            #expect(signedUp.status == 200, "\(String(decoding: signedUp.body, as: UTF8.self))")
            #expect(signedUp.json["isNewUser"] as? Bool == true && signedUp.string("phoneNumber") == Self.number)
            let session = Session(signedUp)
            let claims = session.claims
            #expect(claims["phone_number"] as? String == Self.number && claims["provider_id"] == nil)
            let firebase = claims["firebase"] as? [String: Any]
            #expect(firebase?["sign_in_provider"] as? String == "phone")
            #expect((firebase?["identities"] as? [String: Any])?["phone"] as? [String] == [Self.number])
            #expect(try await api.admin("verifyIdToken", ["idToken": session.idToken]).status == 200)
            #expect(try await Self.complete(api, ["sessionInfo": sessionInfo, "code": code]).errorCode == "INVALID_SESSION_INFO")
            // The REAUTH session was refused before it was spent: it now signs the account in.
            let again = try await Self.complete(api, ["sessionInfo": reauthSession, "code": reauthCode, "operation": "REAUTH"])
            #expect(again.status == 200 && again.json["isNewUser"] as? Bool == false && again.string("localId") == session.localID)
            let found = try await api.admin("lookup", ["phoneNumber": ["+1 555 555 0100"]])
            #expect((found.json["users"] as? [[String: Any]])?.first?["localId"] as? String == session.localID)
        }
    }

    @Test("P4, P5: five wrong codes kill the session, and an expired one is SESSION_EXPIRED; nothing of them is listed")
    func guessesAndExpiry() async throws {
        let clock = ShiftedClock()
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            try await Self.enablePhone(http)
            let (sessionInfo, code) = try await Self.code(api)
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 {
                #expect(try await Self.complete(api, ["sessionInfo": sessionInfo, "code": wrong]).errorCode == "INVALID_CODE")
            }
            #expect(try await Self.complete(api, ["sessionInfo": sessionInfo, "code": code]).errorCode == "SESSION_EXPIRED")
            let (late, lateCode) = try await Self.code(api)
            clock.advance(601)
            #expect(try await Self.complete(api, ["sessionInfo": late, "code": lateCode]).errorCode == "SESSION_EXPIRED")
            let inbox = try await api.http.get("/emulator/v1/projects/demo-test/verificationCodes")
            #expect((inbox.json["verificationCodes"] as? [[String: String]])?.isEmpty == true)
        }
    }

    @Test(
        "P6, P7, P9: a taken number yields a temporaryProof that signs its owner in once; a stale link and a disabled owner keep the code")
    func linkingAndProofs() async throws {
        let clock = ShiftedClock()
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            try await Self.enablePhone(http)
            let (ownerSession, ownerCode) = try await Self.code(api)
            let owner = Session(try await Self.complete(api, ["sessionInfo": ownerSession, "code": ownerCode]))
            let user = try await api.signUp("u@example.com")

            let (sessionInfo, code) = try await Self.code(api)
            let refused = try await Self.complete(api, ["sessionInfo": sessionInfo, "code": code, "idToken": user.idToken])
            #expect(refused.status == 200 && refused.string("idToken") == nil && refused.string("localId") == nil)
            #expect(refused.string("phoneNumber") == Self.number && refused.string("temporaryProofExpiresIn") == "3600")
            let proof = try #require(refused.string("temporaryProof"))
            let linkAgain = try await Self.complete(api, ["temporaryProof": proof, "phoneNumber": Self.number, "idToken": user.idToken])
            #expect(linkAgain.errorCode == "PHONE_NUMBER_EXISTS")
            #expect(try await Self.complete(api, ["temporaryProof": proof]).errorCode == "MISSING_PHONE_NUMBER")
            let asOwner = try await Self.complete(api, ["temporaryProof": proof, "phoneNumber": Self.number])
            #expect(asOwner.status == 200 && asOwner.string("localId") == owner.localID)
            #expect(
                try await Self.complete(api, ["temporaryProof": proof, "phoneNumber": Self.number]).errorCode == "INVALID_TEMPORARY_PROOF")

            // A free number links to the caller; a stale sign-in is refused and the code stays usable.
            let other = "+15555550199"
            let (linkSession, linkCode) = try await Self.code(api, other)
            clock.advance(301)
            // The proof is checked before the token (§A.5): a wrong code with a stale token is INVALID_CODE.
            let wrong = linkCode == "000000" ? "111111" : "000000"
            #expect(
                try await Self.complete(api, ["sessionInfo": linkSession, "code": wrong, "idToken": user.idToken]).errorCode
                    == "INVALID_CODE")
            let stale = try await Self.complete(api, ["sessionInfo": linkSession, "code": linkCode, "idToken": user.idToken])
            #expect(stale.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let fresh = try await api.signIn("u@example.com")
            let linked = try await Self.complete(api, ["sessionInfo": linkSession, "code": linkCode, "idToken": fresh.idToken])
            #expect(linked.status == 200 && linked.string("localId") == user.localID && linked.string("phoneNumber") == other)
            let looked = try await api.client("lookup", ["idToken": Session(linked).idToken])
            let info = (looked.json["users"] as? [[String: Any]])?.first
            #expect(info?["phoneNumber"] as? String == other && info?["email"] as? String == "u@example.com")

            // P9: a disabled owner is refused, and the same code signs in once re-enabled.
            #expect(try await api.admin("update", ["localId": owner.localID, "disableUser": true]).status == 200)
            let (disabledSession, disabledCode) = try await Self.code(api)
            let body: [String: any Sendable] = ["sessionInfo": disabledSession, "code": disabledCode]
            #expect(try await Self.complete(api, body).errorCode == "USER_DISABLED")
            #expect(try await api.admin("update", ["localId": owner.localID, "disableUser": false]).status == 200)
            #expect(try await Self.complete(api, body).string("localId") == owner.localID)
        }
    }

    @Test("A.6: THE RULE takes the squatter's phone with the password when the mailbox's owner signs in by email link")
    func theRuleTakesThePhone() async throws {
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            try await Self.enablePhone(http)
            let squatter = try await api.signUp("victim@example.com")
            let (sessionInfo, code) = try await Self.code(api)
            let linked = try await Self.complete(api, ["sessionInfo": sessionInfo, "code": code, "idToken": squatter.idToken])
            #expect(linked.status == 200 && linked.string("phoneNumber") == Self.number)
            let signInCode = try await ActionHandlerTests.link(
                api, "EMAIL_SIGNIN", "victim@example.com", ["continueUrl": "https://example.com/finish", "canHandleCodeInApp": true]
            ).code
            let owner = try await api.client("signInWithEmailLink", ["email": "victim@example.com", "oobCode": signInCode])
            #expect(owner.status == 200, "\(String(decoding: owner.body, as: UTF8.self))")
            let user = (try await api.admin("lookup", ["localId": [squatter.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(user?["phoneNumber"] == nil && user?["passwordHash"] == nil && user?["emailVerified"] as? Bool == true)
            #expect(try await api.refresh(Session(linked).refreshToken).status == 400, "the squatter's phone session is revoked")
            // The number is free again: it signs up a new account.
            let (freeSession, freeCode) = try await Self.code(api)
            let fresh = try await Self.complete(api, ["sessionInfo": freeSession, "code": freeCode])
            #expect(fresh.json["isNewUser"] as? Bool == true && fresh.string("localId") != squatter.localID)

            // §4.8: a password reset of an unverified account takes the phone too.
            let second = try await api.signUp("victim2@example.com")
            let (linkSession, linkCode) = try await Self.code(api, "+15555550188")
            #expect(
                try await Self.complete(api, ["sessionInfo": linkSession, "code": linkCode, "idToken": second.idToken]).status == 200)
            let reset = try await ActionHandlerTests.link(api, "PASSWORD_RESET", "victim2@example.com").code
            #expect(try await api.client("resetPassword", ["oobCode": reset, "newPassword": "owner-pass-2"]).status == 200)
            let after = (try await api.admin("lookup", ["localId": [second.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(after?["phoneNumber"] == nil)
        }
    }

    @Test(
        "signUp.spec, emailLink.spec, setAccountInfo: a phone user adds email and password, another links an email by link; a disabled caller cannot link"
    )
    func phoneUsersGainCredentials() async throws {
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            try await Self.enablePhone(http)
            let (first, firstCode) = try await Self.code(api, "+15555550131")
            let phoneUser = Session(try await Self.complete(api, ["sessionInfo": first, "code": firstCode]))
            let added = try await api.client(
                "signUp", ["idToken": phoneUser.idToken, "email": "p@example.com", "password": "secret-pass", "returnSecureToken": true])
            #expect(added.status == 200 && added.string("localId") == phoneUser.localID, "\(String(decoding: added.body, as: UTF8.self))")
            #expect(try await api.signIn("p@example.com").localID == phoneUser.localID)
            let info = (try await api.client("lookup", ["idToken": Session(added).idToken]).json["users"] as? [[String: Any]])?.first
            let ids = Set((info?["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String })
            #expect(ids == ["phone", "password"])

            let (second, secondCode) = try await Self.code(api, "+15555550132")
            let linker = Session(try await Self.complete(api, ["sessionInfo": second, "code": secondCode]))
            let link = try await ActionHandlerTests.link(
                api, "EMAIL_SIGNIN", "q@example.com", ["continueUrl": "https://example.com/finish", "canHandleCodeInApp": true])
            let linked = try await api.client(
                "signInWithEmailLink", ["email": "q@example.com", "oobCode": link.code, "idToken": linker.idToken])
            #expect(linked.status == 200 && linked.string("localId") == linker.localID)
            let user = (try await api.admin("lookup", ["localId": [linker.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(user?["email"] as? String == "q@example.com" && user?["phoneNumber"] as? String == "+15555550132")

            // should error if user to be linked is disabled
            let (third, thirdCode) = try await Self.code(api, "+15555550133")
            #expect(try await api.admin("update", ["localId": linker.localID, "disableUser": true]).status == 200)
            let refused = try await Self.complete(api, ["sessionInfo": third, "code": thirdCode, "idToken": Session(linked).idToken])
            #expect(refused.errorCode == "USER_DISABLED")
        }
    }

    @Test("Corrections 11: authorizedDomains is seeded from the environment, writable, validated, and in force at once")
    func authorizedDomains() async throws {
        try await withServer(Self.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let seeded = try await http.admin.get("/v2/projects/demo-test/config", headers: [API.admin])
            #expect(seeded.json["authorizedDomains"] as? [String] == ["localhost", "example.com"])
            func send(_ continueURL: String) async throws -> TestHTTPClient.Reply {
                try await api.admin(
                    "sendOobCode",
                    ["requestType": "PASSWORD_RESET", "email": "a@example.com", "continueUrl": continueURL, "returnOobLink": true])
            }
            #expect(try await api.admin("signUp", ["email": "a@example.com"]).status == 200)
            #expect(try await send("https://app.acme.org/done").errorCode == "UNAUTHORIZED_DOMAIN")
            for bad in ["https://acme.org", "acme.org/path", "acme.org:443", "*.acme.org"] {
                let refused = try await Self.patchConfig(http, mask: "authorizedDomains", ["authorizedDomains": [bad]])
                #expect(refused.errorCode == "INVALID_AUTHORIZED_DOMAIN", "\(bad)")
            }
            let set = try await Self.patchConfig(http, mask: "authorizedDomains", ["authorizedDomains": ["ACME.org", "example.com"]])
            #expect(set.status == 200 && set.json["authorizedDomains"] as? [String] == ["acme.org", "example.com"])
            #expect(try await send("https://app.acme.org/done").status == 200, "in force at once")
            #expect(try await send("http://localhost/done").errorCode == "UNAUTHORIZED_DOMAIN")
            let project = try await http.get("/v1/projects?key=\(API.key)")
            #expect(project.json["authorizedDomains"] as? [String] == ["acme.org", "example.com"])
        }
    }

    @Test("P11, P13, P14, 0.4: test numbers send nothing and take their code; regions refuse; tenants are unsupported; config checks")
    func configurationRules() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.demoConfiguration(), database: database) { http in
            let api = API(http: http)
            try await Self.enablePhone(http, testNumbers: ["+16505550101": "123456"])
            for _ in 0..<20 {
                let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
                #expect(sent.status == 200)
            }
            let sessionInfo = try #require(
                try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"]).string("sessionInfo"))
            #expect(try await Self.complete(api, ["sessionInfo": sessionInfo, "code": "123456"]).status == 200)
            #expect(try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox", database) == 0, "test numbers send nothing")

            let region = try await Self.patchConfig(
                http, mask: "smsRegionConfig", ["smsRegionConfig": ["allowlistOnly": ["allowedRegions": ["DE"]]]])
            #expect(region.status == 200)
            #expect(
                try await api.client("sendVerificationCode", ["phoneNumber": Self.number]).errorMessage
                    == "OPERATION_NOT_ALLOWED : SMS unable to be sent until this region enabled by the app developer.")
            #expect(try await api.client("sendVerificationCode", ["phoneNumber": "+4915112345678"]).status == 200)
            #expect(try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox", database) == 1)
            #expect(
                try await api.client("sendVerificationCode", ["phoneNumber": Self.number, "tenantId": "t1"]).errorCode
                    == "UNSUPPORTED_TENANT_OPERATION")
            #expect(
                try await Self.complete(api, ["sessionInfo": "x", "code": "1", "tenantId": "t1"]).errorCode
                    == "UNSUPPORTED_TENANT_OPERATION")

            let config = try await http.admin.get("/v2/projects/demo-test/config", headers: [API.admin])
            #expect(config.status == 200)
            let signIn = config.json["signIn"] as? [String: Any]
            #expect((signIn?["phoneNumber"] as? [String: Any])?["enabled"] as? Bool == true)
            #expect(((config.json["smsRegionConfig"] as? [String: Any])?["allowlistOnly"]) != nil)
            #expect(
                try await Self.patchConfig(http, mask: "bogus", ["bogus": 1]).errorMessage
                    == "Invalid JSON payload received. Unknown name \"bogus\" at 'config': Cannot find field.")
            #expect(
                try await Self.patchConfig(http, mask: "signIn.allowDuplicateEmails", ["signIn": ["allowDuplicateEmails": true]]).errorCode
                    == "INVALID_CONFIG")
            #expect(try await Self.patchConfig(http, mask: "mfa.state", ["mfa": ["state": "ON"]]).status == 400)
            // A parent in the mask replaces the stored members under it; members with no effect here are kept and echoed.
            let parent = try await Self.patchConfig(
                http, mask: "signIn,passwordPolicyConfig,notification",
                [
                    "signIn": ["phoneNumber": ["enabled": false] as [String: any Sendable]],
                    "passwordPolicyConfig": ["enforcementState": "OFF"],
                    "notification": ["defaultLocale": "de"],
                ])
            #expect(parent.status == 200, "\(String(decoding: parent.body, as: UTF8.self))")
            #expect(((parent.json["signIn"] as? [String: Any])?["phoneNumber"] as? [String: Any])?["enabled"] as? Bool == false)
            #expect((parent.json["passwordPolicyConfig"] as? [String: Any])?["enforcementState"] as? String == "OFF")
            let notification = parent.json["notification"] as? [String: Any]
            #expect(notification?["defaultLocale"] as? String == "de")
            #expect(
                ((notification?["sendSms"] as? [String: Any])?["smsTemplate"] as? [String: Any])?["content"] != nil, "output-only, kept")
            #expect(try await http.get("/v2/projects/demo-test/config?key=\(API.key)").status == 403)
        }
    }
}

/// An SMS webhook receiver on loopback: records what it was sent and answers the statuses it was
/// told to, in order, then 204.
final class SMSReceiver: Sendable {
    struct Delivery: Sendable {
        var timestamp: String
        var signature: String
        var messageID: String
        /// The W3C `traceparent` the delivery carried ("" when none).
        var traceparent: String = ""
        var body: [UInt8]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    private let state = Mutex<(deliveries: [Delivery], attempts: Int, script: [Int])>(([], 0, []))

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    var attempts: Int { state.withLock { $0.attempts } }
    /// The statuses to answer next, before 204.
    func answer(_ statuses: [Int]) { state.withLock { $0.script = statuses } }

    func run<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("sms") { request, _ -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            let status = self.state.withLock { state -> Int in
                state.attempts += 1
                return state.script.isEmpty ? 204 : state.script.removeFirst()
            }
            if status == 204 {
                let delivery = Delivery(
                    timestamp: request.headers[.init("X-Accountd-Timestamp")!] ?? "",
                    signature: request.headers[.init("X-Accountd-Signature")!] ?? "",
                    messageID: request.headers[.init("X-Accountd-Message-Id")!] ?? "",
                    traceparent: request.headers[.init("traceparent")!] ?? "", body: Array(buffer: bytes))
                self.state.withLock { $0.deliveries.append(delivery) }
            }
            return HTTPResponse.Status(code: status)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in try await body("http://127.0.0.1:\(try #require(client.port))/sms") }
    }
}

/// Waits for `condition`, recording `what` when it never holds.
func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    let held = try await eventually(timeout: timeout, condition)
    #expect(held, Comment(rawValue: what))
}

@Suite("Phone sign-in in a production configuration (webhook SMS, limits on)")
struct PhoneProductionTests {
    static let secret = "sms-secret-0123456789abcdef"

    static func configuration(webhook: String) -> Configuration {
        var configuration = productionConfiguration()
        configuration.phone.transport = .webhook
        configuration.phone.webhookURL = webhook
        configuration.phone.webhookSecret = secret
        configuration.email.delivers = true
        configuration.email.transportEnvironment = ["ACCOUNTD_MAIL_TRANSPORT": "log"]
        configuration.abuseLimits = AbuseLimitSettings(enabled: true)
        return configuration
    }

    @Test(
        "P1, P12, P17: the webhook gets a signed SMS once through failures; a 422 is not retried; a second code within a minute is refused")
    func webhookDelivery() async throws {
        let receiver = SMSReceiver()
        let database = try await TestDatabase.createMigrated()
        // The service's clock stands still, so the spacing bucket's minute is exactly a minute
        // however long the deliveries take; the outbox worker keeps the system clock.
        let clock = ManualClock()
        try await receiver.run { url in
            try await withServer(Self.configuration(webhook: url), database: database, clock: clock) { http in
                var api = API(http: http)
                api.project = "acme-prod"
                try await PhoneSignInTests.enablePhone(http, project: "acme-prod")
                receiver.answer([500, 503])
                // A client's "app hash" that is not one never reaches the SMS the operator pays for and signs.
                let sent = try await api.client(
                    "sendVerificationCode",
                    ["phoneNumber": "+1 (555) 555-0100", "autoRetrievalInfo": ["appSignatureHash": "Urgent: call +1 900 555 0199 now"]])
                let sessionInfo = try #require(sent.string("sessionInfo"), "\(String(decoding: sent.body, as: UTF8.self))")
                try await waitFor("the SMS is delivered after two refusals") { receiver.deliveries.count == 1 }
                let delivery = try #require(receiver.deliveries.first)
                var signed = Array(delivery.timestamp.utf8)
                signed.append(UInt8(ascii: "."))
                signed += delivery.body
                let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(Self.secret.utf8)))
                #expect(delivery.signature == "v1=" + mac.map { String(format: "%02x", $0) }.joined())
                let json = delivery.json
                #expect(json["to"] as? String == "+15555550100" && json["kind"] as? String == "sms_verification")
                #expect(json["purpose"] as? String == "SIGN_IN_OR_SIGN_UP" && json["messageId"] as? String == delivery.messageID)
                let code = try #require(json["code"] as? String)
                #expect(code.count == 6 && code.allSatisfy(\.isNumber))
                #expect((json["text"] as? String)?.hasPrefix("\(code) is your verification code for ") == true)
                #expect((json["text"] as? String)?.contains("Urgent") == false && json["appSignatureHash"] == nil)
                #expect(receiver.attempts == 3)
                try await waitFor("the delivered payload is erased") {
                    try await TakeoverTests.count(
                        "SELECT count(*)::int FROM sms_outbox WHERE status = 'sent' AND payload_sealed IS NULL", database) == 1
                }
                // The code is at rest only as a MAC.
                #expect(
                    try await TakeoverTests.count("SELECT count(*)::int FROM phone_sessions WHERE inbox_code IS NOT NULL", database) == 0)
                let signedIn = try await api.client("signInWithPhoneNumber", ["sessionInfo": sessionInfo, "code": code])
                #expect(signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == true)

                // P12: a second code to the number within the minute.
                let again = try await api.client("sendVerificationCode", ["phoneNumber": "+15555550100"])
                #expect(again.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many SMS sent to this number. Please try again later.")
                #expect(again.header("Retry-After") == "60")

                // P17: a refusal of the message itself is not retried.
                receiver.answer([422])
                let before = receiver.attempts
                #expect(try await api.client("sendVerificationCode", ["phoneNumber": "+15555550111"]).status == 200)
                try await waitFor("the 422 is final") {
                    try await TakeoverTests.count(
                        "SELECT count(*)::int FROM sms_outbox WHERE status = 'failed' AND payload_sealed IS NULL", database) == 1
                }
                #expect(receiver.attempts == before + 1 && receiver.deliveries.count == 1)
            }
        }
    }

    @Test(
        "P11 and floods: test numbers send nothing and take no SMS quota, yet their sessions are bounded; one address is cut off after ten numbers"
    )
    func testNumbersAndFloods() async throws {
        let receiver = SMSReceiver()
        let database = try await TestDatabase.createMigrated()
        // The service's clock stands still: no bucket refills while a loaded machine sends the flood.
        let clock = ManualClock()
        try await receiver.run { url in
            try await withServer(Self.configuration(webhook: url), database: database, clock: clock) { http in
                var api = API(http: http)
                api.project = "acme-prod"
                try await PhoneSignInTests.enablePhone(http, project: "acme-prod", testNumbers: ["+16505550101": "123456"])
                let first = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
                let testSession: String = try #require(first.string("sessionInfo"))
                for attempt in 0..<20 {
                    let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
                    #expect(sent.status == 200, "test number, attempt \(attempt)")
                }
                // Yet a flood of test-number sessions from one address is cut off: each is a row.
                var floodRefused: TestHTTPClient.Reply?
                for _ in 0..<120 {
                    let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
                    if sent.status != 200 {
                        floodRefused = sent
                        break
                    }
                }
                #expect(floodRefused?.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER" && floodRefused?.header("Retry-After") != nil)
                let sessionRows = try await TakeoverTests.count("SELECT count(*)::int FROM phone_sessions", database)
                #expect(sessionRows == 100, "\(sessionRows) sessions from one address: the burst, and no more")
                #expect(try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox", database) == 0)
                // Numbers of ten different ranges from one address, then an eleventh: sms_per_ip.
                for index in 0..<10 {
                    let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+1555\(100 + index)550100"])
                    #expect(sent.status == 200, "number \(index)")
                }
                let eleventh = try await api.client("sendVerificationCode", ["phoneNumber": "+15551205550100"])
                #expect(
                    eleventh.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many requests from this network. Please try again later.")
                #expect(eleventh.header("Retry-After") != nil)
                #expect(try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox", database) == 10)
                // A test number's session minted before the floods still signs in with its code.
                #expect(try await api.client("signInWithPhoneNumber", ["sessionInfo": testSession, "code": "123456"]).status == 200)
            }
        }
    }

    @Test("A.7: codes acknowledged while the webhook is down are delivered once each by the next process, and still sign in")
    func deliveryAcrossARestart() async throws {
        let receiver = SMSReceiver()
        let database = try await TestDatabase.createMigrated()
        let numbers = ["+15555550161", "+15555550262", "+15555550363"]
        try await receiver.run { url in
            receiver.answer(Array(repeating: 503, count: 10_000))
            let sessions = try await withServer(Self.configuration(webhook: url), database: database) { http in
                try await PhoneSignInTests.enablePhone(http, project: "acme-prod")
                var sessions: [String: String] = [:]
                for number in numbers {
                    let sent = try await API(http: http).client("sendVerificationCode", ["phoneNumber": number])
                    let sessionInfo: String = try #require(sent.string("sessionInfo"))
                    sessions[number] = sessionInfo
                }
                try await waitFor("each SMS was tried against the refusing webhook") {
                    try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox WHERE attempts >= 1", database) == numbers.count
                }
                return sessions
            }
            #expect(receiver.deliveries.isEmpty)
            receiver.answer([])
            // Due now rather than after the back-off the first process gave them: the test is about
            // what the next process does with them, not about waiting.
            try await TestDatabase.execute("UPDATE sms_outbox SET next_attempt_at = now() WHERE status = 'pending'", on: database)
            try await withServer(Self.configuration(webhook: url), database: database) { http in
                try await waitFor("the next process delivers every queued SMS") {
                    receiver.deliveries.count >= numbers.count
                }
                try await waitFor("every row is recorded sent") {
                    try await TakeoverTests.count("SELECT count(*)::int FROM sms_outbox WHERE status = 'sent'", database) == numbers.count
                }
                let delivered = receiver.deliveries.map(\.json)
                #expect(delivered.count == numbers.count, "exactly once each")
                #expect(Set(delivered.compactMap { $0["to"] as? String }) == Set(numbers))
                #expect(Set(receiver.deliveries.map(\.messageID)).count == numbers.count)
                var api = API(http: http)
                api.project = "acme-prod"
                for message in delivered {
                    let number = try #require(message["to"] as? String)
                    let reply = try await api.client(
                        "signInWithPhoneNumber",
                        ["sessionInfo": try #require(sessions[number]), "code": try #require(message["code"] as? String)])
                    #expect(reply.status == 200 && reply.string("phoneNumber") == number)
                }
            }
        }
    }

    @Test("A.5: one session completed twice at once signs in once, the other is INVALID_SESSION_INFO, with the limits' admission path on")
    func concurrentCompletion() async throws {
        let receiver = SMSReceiver()
        try await receiver.run { url in
            try await withServer(Self.configuration(webhook: url), database: try await TestDatabase.createMigrated()) { http in
                var api = API(http: http)
                api.project = "acme-prod"
                try await PhoneSignInTests.enablePhone(http, project: "acme-prod", testNumbers: ["+16505550101": "123456"])
                let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
                let sessionInfo: String = try #require(sent.string("sessionInfo"))
                // A new account: with the limits on, each request first rolls back to take its
                // account-creation cell, then runs again.
                async let first = PhoneSignInTests.complete(api, ["sessionInfo": sessionInfo, "code": "123456"])
                async let second = PhoneSignInTests.complete(api, ["sessionInfo": sessionInfo, "code": "123456"])
                let replies = try await [first, second]
                #expect(replies.filter { $0.status == 200 }.count == 1)
                #expect(replies.filter { $0.errorCode == "INVALID_SESSION_INFO" }.count == 1)
                let users = try await api.admin("lookup", ["phoneNumber": ["+16505550101"]])
                #expect((users.json["users"] as? [[String: Any]])?.count == 1)
            }
        }
    }

    @Test("P15: admin create normalises the number, a second create with it is PHONE_NUMBER_EXISTS, the import refuses a bad one")
    func adminByPhone() async throws {
        try await withServer(PhoneSignInTests.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let created = try await api.admin("signUp", ["phoneNumber": "+44 20 7946 0000"])
            #expect(created.status == 200, "\(String(decoding: created.body, as: UTF8.self))")
            let found = try await api.admin("lookup", ["phoneNumber": ["+442079460000"]])
            #expect((found.json["users"] as? [[String: Any]])?.first?["phoneNumber"] as? String == "+442079460000")
            #expect(try await api.admin("signUp", ["phoneNumber": "+442079460000"]).errorCode == "PHONE_NUMBER_EXISTS")
            #expect(try await api.admin("lookup", ["phoneNumber": ["nope"]]).errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
            #expect(try await api.admin("signUp", ["phoneNumber": "12345"]).errorCode == "INVALID_PHONE_NUMBER")
            // setAccountInfo.spec: set, the same number again (a no-op), another user's, an invalid one.
            let other = try #require(try await api.admin("signUp", ["email": "other@example.com"]).string("localId"))
            #expect(try await api.admin("update", ["localId": other, "phoneNumber": "+1 555 555 0177"]).status == 200)
            #expect(try await api.admin("update", ["localId": other, "phoneNumber": "+15555550177"]).status == 200)
            #expect(try await api.admin("update", ["localId": other, "phoneNumber": "+442079460000"]).errorCode == "PHONE_NUMBER_EXISTS")
            #expect(try await api.admin("update", ["localId": other, "phoneNumber": "abc"]).errorCode == "INVALID_PHONE_NUMBER")
            let looked = (try await api.admin("lookup", ["localId": [other]]).json["users"] as? [[String: Any]])?.first
            #expect(looked?["phoneNumber"] as? String == "+15555550177")
            let providers = looked?["providerUserInfo"] as? [[String: Any]] ?? []
            #expect(providers.contains { $0["providerId"] as? String == "phone" && $0["rawId"] as? String == "+15555550177" })
            let imported = try await api.admin("batchCreate", ["users": [["localId": "imp1", "phoneNumber": "12"]]])
            let errors = imported.json["error"] as? [[String: Any]]
            #expect(errors?.first?["message"] as? String == "Phone number format is invalid")
        }
    }
}
