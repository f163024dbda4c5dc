import AccountCore
import Foundation
import Testing

/// What an account looks like when it is made and after each change: decided in Core, proved here
/// without a database (the store writes what these return).
@Suite("Account shapes (pure)")
struct AccountShapeTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000.25)
    static let later = t0 + 90
    static let argon = StoredPassword(algorithm: StoredPassword.argon2id, hash: Array("$argon2id$x".utf8))

    static func account(
        email: String? = "ann@example.com", verified: Bool = false, linkSignin: Bool = false, password: Bool = true
    ) -> UserRecord {
        var user = UserRecord.blank(localID: "u1", now: t0)
        user.email = email
        user.emailVerified = verified
        user.emailLinkSignin = linkSignin
        user.phoneNumber = "+15551234567"
        user.displayName = "Ann"
        user.password = password ? PasswordCredential(stored: argon, updatedAt: t0) : nil
        user.federated = [FederatedIdentity(providerID: "google.com", rawID: "g-1", linkedAt: t0)]
        user.credentialVersion = 3
        return user
    }

    @Test("each sign-in method makes its own account: created and revocable from now, signed in unless an admin made it")
    func constructors() {
        let anonymous = UserRecord.anonymousSignUp(localID: "a", now: Self.t0)
        #expect(anonymous.anonymous && anonymous.isAnonymous && anonymous.lastLoginAt == Self.t0 && anonymous.email == nil)
        #expect(anonymous.createdAt == Self.t0 && anonymous.tokensValidAfter == Self.t0 && anonymous.validSince == 1_700_000_000)

        let signUp = UserRecord.passwordSignUp(localID: "p", email: "p@example.com", password: Self.argon, displayName: "P", now: Self.t0)
        #expect(signUp.signinMethods == ["password"] && !signUp.emailVerified && !signUp.anonymous && signUp.lastLoginAt == Self.t0)
        #expect(signUp.password?.updatedAt == Self.t0 && signUp.displayName == "P")

        let admin = UserRecord.adminCreated(
            localID: "m", email: "m@example.com", emailVerified: true, password: nil, phoneNumber: "+15550000000", displayName: nil,
            photoURL: "https://example.com/m.png", disabled: true, now: Self.t0)
        #expect(admin.lastLoginAt == nil && admin.emailVerified && admin.disabled && admin.password == nil && admin.signinMethods.isEmpty)

        let link = UserRecord.emailLinkSignUp(localID: "l", email: "l@example.com", now: Self.t0)
        #expect(link.signinMethods == ["emailLink"] && link.emailVerified && link.hasPasswordProvider && link.password == nil)

        let custom = UserRecord.customTokenSignUp(localID: "c", now: Self.t0)
        #expect(custom.customAuth && !custom.isAnonymous && custom.email == nil && custom.lastLoginAt == Self.t0)
    }

    @Test("a federated account takes the assertion's profile; its email is verified only when the provider is trusted for it")
    func federatedSignUp() {
        let assertion = IdPAssertion(
            providerID: "oidc.corp", rawID: "sub-1", email: "f@corp.example", emailVerified: true, displayName: "F",
            photoURL: "https://corp.example/f.png")
        let untrusted = UserRecord.federatedSignUp(localID: "f", assertion: assertion, trusted: false, now: Self.t0)
        #expect(untrusted.email == "f@corp.example" && !untrusted.emailVerified && untrusted.displayName == "F")
        #expect(untrusted.federated == [assertion.identity(linkedAt: Self.t0)] && untrusted.signinMethods == ["oidc.corp"])
        #expect(UserRecord.federatedSignUp(localID: "f", assertion: assertion, trusted: true, now: Self.t0).emailVerified)
        var unverified = assertion
        unverified.emailVerified = false
        #expect(!UserRecord.federatedSignUp(localID: "f", assertion: unverified, trusted: true, now: Self.t0).emailVerified)
    }

    @Test("an update: a new email resets verification and the email-link method, keeps the first address; fields keep, set or clear")
    func updateEmail() {
        let user = Self.account(verified: true, linkSignin: true)
        var change = UserChange()
        change.email = .set("new@example.com")
        var after = change.write(on: user, now: Self.later).user
        #expect(after.email == "new@example.com" && !after.emailVerified && !after.emailLinkSignin)
        #expect(after.initialEmail == "ann@example.com" && after.credentialVersion == 3)
        change.emailVerified = true
        #expect(change.write(on: user, now: Self.later).user.emailVerified)
        // A second change keeps the first address as the initial one.
        var second = UserChange()
        second.email = .set("third@example.com")
        #expect(second.write(on: after, now: Self.later).user.initialEmail == "ann@example.com")

        var clear = UserChange()
        clear.email = .clear
        after = clear.write(on: user, now: Self.later).user
        #expect(after.email == nil && !after.emailVerified && !after.emailLinkSignin && after.initialEmail == nil)

        var verifyOnly = UserChange()
        verifyOnly.emailVerified = false
        after = verifyOnly.write(on: user, now: Self.later).user
        #expect(after.email == "ann@example.com" && !after.emailVerified && after.emailLinkSignin)

        var profile = UserChange()
        profile.displayName = .clear
        profile.photoURL = .set("https://example.com/a.png")
        profile.customAttributes = .set(#"{"role":"admin"}"#)
        after = profile.write(on: user, now: Self.later).user
        #expect(after.displayName == nil && after.photoURL == "https://example.com/a.png" && after.customClaims["role"] == .string("admin"))
        #expect(after.phoneNumber == "+15551234567" && after.email == user.email && after.emailVerified)
        #expect(UserChange().write(on: user, now: Self.later) == AccountWrite(user: user))
    }

    @Test("an update: a new password and a removed one each start a credential version; removing providers unlinks them")
    func updateCredentials() {
        let user = Self.account(verified: true, linkSignin: true)
        var change = UserChange()
        change.password = Self.argon
        var write = change.write(on: user, now: Self.later)
        #expect(write.newPassword == Self.argon && write.user.credentialVersion == 4 && write.user.password?.updatedAt == Self.later)
        #expect(write.user.emailLinkSignin, "a new password keeps the email-link method")

        change = UserChange()
        change.deleteProviders = ["password", "phone", "google.com"]
        write = change.write(on: user, now: Self.later)
        #expect(write.removesPassword && write.user.password == nil && !write.user.emailLinkSignin && write.user.credentialVersion == 4)
        #expect(write.user.phoneNumber == nil && write.unlinks == ["google.com"] && write.user.federated.isEmpty)
        #expect(write.user.signinMethods.isEmpty)

        change.password = Self.argon
        #expect(change.write(on: user, now: Self.later).user.credentialVersion == 5)
    }

    @Test("an update that adds a credential ends anonymity for good; an admin's link replaces the provider's identity")
    func updateAnonymousAndLink() {
        let anonymous = UserRecord.anonymousSignUp(localID: "a", now: Self.t0)
        var profile = UserChange()
        profile.displayName = .set("Still anonymous")
        #expect(profile.write(on: anonymous, now: Self.later).user.anonymous)
        for credential in ["email", "phone", "password", "link"] {
            var change = UserChange()
            switch credential {
            case "email": change.email = .set("a@example.com")
            case "phone": change.phoneNumber = .set("+15550001111")
            case "password": change.password = Self.argon
            default: change.linkIdentity = FederatedIdentity(providerID: "github.com", rawID: "gh", linkedAt: Self.t0)
            }
            #expect(!change.write(on: anonymous, now: Self.later).user.anonymous, "\(credential)")
        }

        var link = UserChange()
        link.linkIdentity = FederatedIdentity(providerID: "google.com", rawID: "g-2", linkedAt: Self.t0)
        let write = link.write(on: Self.account(), now: Self.later)
        #expect(write.link?.linkedAt == Self.later && write.user.federated.map(\.rawID) == ["g-2"])

        var admin = UserChange()
        admin.disabled = true
        admin.createdAt = Self.t0 - 86400
        admin.lastLoginAt = Self.later
        let after = admin.write(on: Self.account(), now: Self.later).user
        #expect(after.disabled && after.createdAt == Self.t0 - 86400 && after.lastLoginAt == Self.later)
    }

    @Test("THE RULE's strip removes links and phone (and the password unless a reset replaces it) and starts a credential version")
    func strip() {
        let user = Self.account()
        let link = StripPlan(removePassword: true, revokeReason: .emailLinkTakeoverProtection).applied(to: user)
        #expect(link.password == nil && link.federated.isEmpty && link.phoneNumber == nil && link.credentialVersion == 4)
        #expect(link.email == user.email && link.displayName == user.displayName)
        let reset = StripPlan(removePassword: false, revokeReason: .passwordReset).applied(to: user)
        #expect(reset.password == user.password && reset.federated.isEmpty)
    }

    @Test("an email link: the address becomes the account's, proven, a password-provider method; after the strip when unverified")
    func emailLinkCompleted() {
        let squatted = Self.account()
        let strip = TakeoverRules.plan(for: squatted, proof: .emailLink)
        let after = EmailLinkRules.completed(squatted, email: "ann@example.com", strip: strip, now: Self.later)
        #expect(after.signinMethods == ["emailLink"] && after.emailVerified && after.phoneNumber == nil && after.lastLoginAt == Self.later)
        #expect(after.initialEmail == nil, "the same address is not a change")

        let verified = Self.account(verified: true)
        let kept = EmailLinkRules.completed(verified, email: "ann@example.com", strip: nil, now: Self.later)
        #expect(kept.signinMethods == ["password", "emailLink", "google.com"] && kept.credentialVersion == 3)

        let anonymous = UserRecord.anonymousSignUp(localID: "a", now: Self.t0)
        let linked = EmailLinkRules.completed(anonymous, email: "a@example.com", strip: nil, now: Self.later)
        #expect(!linked.anonymous && linked.email == "a@example.com" && linked.initialEmail == nil)
        let moved = EmailLinkRules.completed(verified, email: "moved@example.com", strip: nil, now: Self.later)
        #expect(
            moved.email == "moved@example.com" && moved.emailVerified && moved.emailLinkSignin && moved.initialEmail == "ann@example.com")
    }

    @Test("codes: verify proves the address; a change proves the new one; a recovery restores the old one's verification")
    func mailboxChanges() throws {
        let user = Self.account(linkSignin: true)
        #expect(MailboxChanges.verified(user).emailVerified)
        func code(_ kind: ActionCodeKind, restore: Bool = false) -> ActionCodeRecord {
            ActionCodeRecord(
                kind: kind, localID: "u1", email: "ann@example.com", newEmail: "new@example.com", lang: "en", expiresAt: Self.later,
                usedAt: nil, restoreEmailVerified: restore)
        }
        let changed = try MailboxChanges.emailReplaced(user, by: code(.verifyAndChangeEmail))
        #expect(changed.email == "new@example.com" && changed.emailVerified && !changed.emailLinkSignin)
        #expect(changed.initialEmail == "ann@example.com")
        #expect(try !MailboxChanges.emailReplaced(user, by: code(.recoverEmail)).emailVerified)
        #expect(try MailboxChanges.emailReplaced(user, by: code(.recoverEmail, restore: true)).emailVerified)
        var noTarget = code(.recoverEmail)
        noTarget.newEmail = nil
        #expect(throws: AccountError.self) { try MailboxChanges.emailReplaced(user, by: noTarget) }

        let reset = MailboxChanges.passwordReset(
            user, password: Self.argon, strip: TakeoverRules.plan(for: user, proof: .passwordReset), now: Self.later)
        #expect(reset.emailVerified && reset.password?.updatedAt == Self.later && reset.credentialVersion == 5)
        #expect(reset.federated.isEmpty && reset.phoneNumber == nil)
        let verified = Self.account(verified: true)
        let plain = MailboxChanges.passwordReset(verified, password: Self.argon, strip: nil, now: Self.later)
        #expect(plain.credentialVersion == 4 && plain.federated.count == 1 && plain.phoneNumber != nil)
    }

    @Test("a custom-token sign-in makes the account a custom-auth one and not anonymous")
    func customToken() {
        let after = UserRecord.anonymousSignUp(localID: "a", now: Self.t0).signedInWithCustomToken(now: Self.later)
        #expect(after.customAuth && !after.anonymous && after.lastLoginAt == Self.later)
    }

    @Test("enumeration protection hides accounts from clients when on, never from an admin; a hidden discovery reports nothing")
    func enumerationProtection() {
        var settings = ProjectSettings(projectID: "p")
        #expect(!settings.hidesAccounts(fromAdmin: false) && !settings.hidesAccounts(fromAdmin: true))
        settings.emailEnumerationProtection = true
        #expect(settings.hidesAccounts(fromAdmin: false) && !settings.hidesAccounts(fromAdmin: true))

        let user = Self.account(verified: true, linkSignin: true)
        let shown = AccountService.Discovery(user, hidden: false)
        #expect(shown.registered == true && shown.signinMethods == ["password", "emailLink", "google.com"])
        #expect(shown.allProviders == ["password", "google.com"])
        let unknown = AccountService.Discovery(nil, hidden: false)
        #expect(unknown.registered == false && unknown.signinMethods == [] && unknown.allProviders == [])
        let hidden = AccountService.Discovery(user, hidden: true)
        #expect(hidden.registered == nil && hidden.signinMethods == nil && hidden.allProviders == nil)
        #expect(hidden == AccountService.Discovery(nil, hidden: true))
    }
}
