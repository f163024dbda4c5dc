package import Foundation

/// What a new account looks like, one constructor per way of creating one: the only place a new
/// account's fields are chosen. The store inserts the record as it is given (one insert for all).
/// Every account starts with its revocation instants at its creation (V = the creation's second).
extension UserRecord {
    /// An account with nothing but its id and creation instant, for a constructor to fill in.
    package static func blank(localID: String, now: Date) -> UserRecord {
        UserRecord(localID: localID, createdAt: now, validSince: RevocationRules.seconds(now), tokensValidAfter: now)
    }

    /// Anonymous sign-up (identity-toolkit.md §4.1, decision 14): signed in now, with no credential.
    package static func anonymousSignUp(localID: String, now: Date) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.anonymous = true
        user.lastLoginAt = now
        return user
    }

    /// Email+password sign-up (identity-toolkit.md §4.1): signed in now; the address is unproven.
    package static func passwordSignUp(
        localID: String, email: String, password: StoredPassword, displayName: String?, now: Date
    ) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.email = email
        user.displayName = displayName
        user.password = PasswordCredential(stored: password, updatedAt: now)
        user.lastLoginAt = now
        return user
    }

    /// An admin's create (identity-toolkit.md §4.1, admin): the fields the admin gave, never signed in.
    package static func adminCreated(
        localID: String, email: String?, emailVerified: Bool, password: StoredPassword?, phoneNumber: String?,
        displayName: String?, photoURL: String?, disabled: Bool, now: Date
    ) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.email = email
        user.emailVerified = emailVerified
        user.password = password.map { PasswordCredential(stored: $0, updatedAt: now) }
        user.phoneNumber = phoneNumber
        user.displayName = displayName
        user.photoURL = photoURL
        user.disabled = disabled
        return user
    }

    /// The first email-link sign-in for an address with no account (identity-toolkit.md §4.3):
    /// the link proved the mailbox, and it is the `password` provider's `emailLink` method.
    package static func emailLinkSignUp(localID: String, email: String, now: Date) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.email = email
        user.emailVerified = true
        user.emailLinkSignin = true
        user.lastLoginAt = now
        return user
    }

    /// The first federated sign-in of an identity no account holds (federation-and-limits.md §A.8
    /// row 5): the identity linked, the assertion's profile, its email verified only as far as the
    /// provider is trusted for it (``FederationRules/storedEmailVerified(_:trusted:)``).
    package static func federatedSignUp(localID: String, assertion: IdPAssertion, trusted: Bool, now: Date) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.email = assertion.email
        user.emailVerified = FederationRules.storedEmailVerified(assertion, trusted: trusted)
        user.displayName = assertion.displayName
        user.photoURL = assertion.photoURL
        user.federated = [assertion.identity(linkedAt: now)]
        user.lastLoginAt = now
        return user
    }

    /// A phone sign-in of a number no account holds (mfa-phone-tenants.md §A.5): nothing but the number.
    package static func phoneSignUp(localID: String, phoneNumber: String, now: Date) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.phoneNumber = phoneNumber
        user.lastLoginAt = now
        return user
    }

    /// The first custom-token sign-in for a uid (federation-and-limits.md §B): nothing but the uid.
    package static func customTokenSignUp(localID: String, now: Date) -> UserRecord {
        var user = blank(localID: localID, now: now)
        user.customAuth = true
        user.lastLoginAt = now
        return user
    }

    /// A returning sign-in of this account (federated identity, phone number): only its last sign-in changes.
    package func signedIn(now: Date) -> UserRecord {
        var user = self
        user.lastLoginAt = now
        return user
    }

    /// A custom-token sign-in of this account: it is now a custom-auth account, and not anonymous.
    package func signedInWithCustomToken(now: Date) -> UserRecord {
        var user = self
        user.customAuth = true
        user.anonymous = false
        user.lastLoginAt = now
        return user
    }

    /// The account with its email replaced by `email` (nil removes it): `verified` as given, the
    /// email-link method gone with the address it was proven for, and the first address the
    /// account had kept as `initialEmail`.
    package func replacingEmail(with email: String?, verified: Bool) -> UserRecord {
        var user = self
        if email != nil, user.initialEmail == nil { user.initialEmail = user.email }
        user.email = email
        user.emailVerified = email != nil && verified
        user.emailLinkSignin = false
        return user
    }
}
