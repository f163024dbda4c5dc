import AccountCore
import AccountTesting
import Foundation
import Testing

@testable import accountd

/// A challenged IdP sign-in (mfa-phone-tenants.md §B.3): the success's fields without tokens, a
/// pending credential the second factor completes, with a real issuer on loopback.
@Suite("Second factors after an IdP sign-in")
struct MFAFederationTests {
    @Test(
        "B.3: an IdP sign-in of a user with a factor answers a pending credential, no tokens, lastLoginAt unchanged; the SMS factor completes it"
    )
    func challengedIdPSignIn() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(FederationTests.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http)
                try await FederationTests.configure(http, issuer)
                func token() throws -> String {
                    try issuer.token(sub: "idp-1", email: "idp@example.com", emailVerified: true, issuedAt: clock.now())
                }
                let first = try await FederationTests.signIn(api, "oidc.test", idToken: try token())
                #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
                let localID = try #require(first.string("localId"))
                try await PhoneSignInTests.enablePhone(http, testNumbers: ["+15555550166": "123466"])
                let mfa = try await PhoneSignInTests.patchConfig(
                    http, mask: "mfa", ["mfa": ["state": "ENABLED", "enabledProviders": ["PHONE_SMS"]] as [String: any Sendable]])
                #expect(mfa.status == 200)
                #expect(
                    try await api.admin("update", ["localId": localID, "mfa": ["enrollments": [["phoneInfo": "+15555550166"]]]]).status
                        == 200)
                let before = try await FederationTests.lookup(api, localID)?["lastLoginAt"] as? String

                clock.advance(5)
                let challenged = try await FederationTests.signIn(api, "oidc.test", idToken: try token())
                #expect(challenged.status == 200, "\(String(decoding: challenged.body, as: UTF8.self))")
                #expect(challenged.json["idToken"] == nil && challenged.json["refreshToken"] == nil && challenged.json["expiresIn"] == nil)
                #expect(challenged.string("localId") == localID && challenged.string("federatedId") != nil)
                let credential = try #require(challenged.string("mfaPendingCredential"))
                let factors = try #require(challenged.json["mfaInfo"] as? [[String: Any]])
                #expect(factors.first?["phoneInfo"] as? String == "+*******0166")
                #expect(try await FederationTests.lookup(api, localID)?["lastLoginAt"] as? String == before)

                let factorID = try #require(factors.first?["mfaEnrollmentId"] as? String)
                let started = try await http.post(
                    "/v2/accounts/mfaSignIn:start?key=\(API.key)",
                    ["mfaPendingCredential": credential, "mfaEnrollmentId": factorID, "phoneSignInInfo": [String: String]()])
                let sessionInfo = try #require((started.json["phoneResponseInfo"] as? [String: Any])?["sessionInfo"] as? String)
                let passed = try await http.post(
                    "/v2/accounts/mfaSignIn:finalize?key=\(API.key)",
                    ["mfaPendingCredential": credential, "phoneVerificationInfo": ["sessionInfo": sessionInfo, "code": "123466"]])
                #expect(passed.status == 200, "\(String(decoding: passed.body, as: UTF8.self))")
                let firebase = Session(passed).claims["firebase"] as? [String: Any]
                #expect(firebase?["sign_in_provider"] as? String == "oidc.test", "the first factor's provider stays")
                #expect(firebase?["sign_in_second_factor"] as? String == "phone")
                #expect(firebase?["second_factor_identifier"] as? String == factorID)
                #expect(try await FederationTests.lookup(api, localID)?["lastLoginAt"] as? String != before)
            }
        }
    }
}
