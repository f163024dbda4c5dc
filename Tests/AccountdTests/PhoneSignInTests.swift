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
            #expect(try await http.get("/v2/projects/demo-test/config?key=\(API.key)").status == 403)
        }
    }
}
