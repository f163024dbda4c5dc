import AccountCore
import Foundation
import Testing

@Suite("Domain rules (pure)")
struct DomainRulesTests {
    @Test("§3.5: V is ⌊R⌋, or ⌊R⌋+1 when a token was minted earlier in that second; never decreases; mints never precede V")
    func validSince() {
        let r = Date(timeIntervalSince1970: 1_700_000_000.6)
        #expect(RevocationRules.validSince(revokedAt: r, lastMint: nil, previous: 0) == 1_700_000_000)
        #expect(
            RevocationRules.validSince(revokedAt: r, lastMint: Date(timeIntervalSince1970: 1_699_999_999.9), previous: 0) == 1_700_000_000)
        #expect(
            RevocationRules.validSince(revokedAt: r, lastMint: Date(timeIntervalSince1970: 1_700_000_000.2), previous: 0) == 1_700_000_001)
        #expect(RevocationRules.validSince(revokedAt: r, lastMint: nil, previous: 1_700_000_005) == 1_700_000_005)
        let mint = RevocationRules.mint(now: r, validSince: 1_700_000_001)
        #expect(mint.issuedAt == 1_700_000_001)
        #expect(mint.recordedAt == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(RevocationRules.mint(now: r, validSince: 1).issuedAt == 1_700_000_000)
    }

    @Test("§1.5: emails, phones, ids")
    func primitives() {
        #expect(EmailAddress.normalize("Alice@Example.COM") == "alice@example.com")
        for bad in [
            "", "x", "a@b", "a b@example.com", "@example.com", "a@-example.com", String(repeating: "a", count: 65) + "@example.com",
        ] {
            #expect(EmailAddress.normalize(bad) == nil, "\(bad)")
        }
        #expect(EmailAddress.normalize("josé@exämple.de") == "josé@exämple.de")
        #expect(PhoneNumber.isValid("+15551234567"))
        #expect(!PhoneNumber.isValid("+0"))
        #expect(!PhoneNumber.isValid("15551234567"))
        #expect(LocalID.generate(SystemRandom()).count == 28)
        #expect(!LocalID.isValid("has space"))
        #expect(throws: AccountError(.weakPassword, "Password should be at least 6 characters")) {
            try PasswordPolicy.firebase.check("12345")
        }
    }

    @Test("§4.3 step 5: ActionCodeSettings faults in the reference's order; authorized domains at label boundaries")
    func actionCodeSettings() {
        var project = ProjectSettings(projectID: "p")
        project.authorizedDomains = ["localhost", "example.com", "10.0.0.1"]
        #expect(project.isAuthorized(host: "app.example.com"))
        #expect(!project.isAuthorized(host: "badexample.com"))
        #expect(project.isAuthorized(host: "10.0.0.1"))
        #expect(!project.isAuthorized(host: "1.10.0.0.1"))
        var settings = ActionCodeSettings()
        settings.continueURL = "https://evil.net/x"
        settings.androidInstallApp = true
        #expect(throws: AccountError(.unauthorizedDomain, "Domain not allowlisted by project")) {
            try settings.validate(kind: .passwordReset, project: project)
        }
        settings.continueURL = "https://example.com/x"
        #expect(throws: AccountError(.missingAndroidPackageName)) { try settings.validate(kind: .passwordReset, project: project) }
        settings.continueURL = nil
        #expect(throws: AccountError(.missingContinueURI)) { try settings.validate(kind: .passwordReset, project: project) }
        #expect(throws: AccountError(.missingContinueURI)) { try ActionCodeSettings().validate(kind: .emailSignIn, project: project) }
        #expect(throws: AccountError(.invalidContinueURI)) {
            var s = ActionCodeSettings()
            s.continueURL = "ftp://example.com"
            try s.validate(kind: .verifyEmail, project: project)
        }
    }

    @Test("§3.1: claims rebuilt from the account; the account's own values win over custom claims")
    func claims() {
        var user = UserRecord(localID: "u1", email: "a@example.com", createdAt: Date(), validSince: 0, tokensValidAfter: Date())
        user.customAttributes = #"{"role":"x","email":"forged@example.com"}"#
        let claims = IDTokenClaims.make(
            user: user, sessionID: "s1", signInProvider: "password", ticket: MintTicket(issuedAt: 100, authTime: 90),
            settings: ProjectSettings(projectID: "p")
        )
        #expect(claims["email"] == .string("a@example.com"))
        #expect(claims["role"] == .string("x"))
        #expect(claims["exp"] == .int(3700))
        #expect(claims["auth_time"] == .int(90))
        #expect(claims["iss"] == .string("https://securetoken.google.com/p"))
        #expect(claims["firebase"]?.objectValue?["sign_in_provider"] == .string("password"))
    }
}
