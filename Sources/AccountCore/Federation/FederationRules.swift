package import Foundation

/// §A.7: whether `config`'s assertion proves the mailbox of its email (decides only linking to an
/// existing account by email).
package enum FederationTrust {
    package static func trusted(_ assertion: IdPAssertion, by config: IdPConfig?, insecureTestMode: Bool = false) -> Bool {
        guard assertion.emailVerified, let email = assertion.email, let at = email.lastIndex(of: "@") else { return false }
        if insecureTestMode { return true }
        guard let config else { return false }
        let domain = String(email[email.index(after: at)...])
        if config.trustedEmailDomains.contains(where: { $0 == "*" || $0 == domain }) { return true }
        return config.providerID == "google.com" && config.options.trustHostedDomain && assertion.hostedDomain?.lowercased() == domain
    }
}

/// What account resolution decided (§A.8), for the adapter to write under the locks it took.
package enum FederationPlan: Sendable, Equatable {
    /// Row 1: a returning identity; nothing but `lastLoginAt` changes.
    case signIn(UserRecord)
    /// Row 2: link to the account with the email, after THE RULE when the plan has one.
    case link(UserRecord, strip: StripPlan?, emailRecycled: Bool)
    /// Row 3: an untrusted assertion of an existing account's email.
    case needConfirmation(UserRecord)
    /// Row 5: a new account.
    case create
}

/// The rules of federated sign-in that decide on accounts (§A.8, §A.9); pure.
package enum FederationRules {
    /// §A.8: `linked` is the user with the link `(providerId, rawId)`, `emailOwner` the user whose
    /// top-level email is the assertion's.
    package static func resolve(
        _ assertion: IdPAssertion, trusted: Bool, linked: UserRecord?, emailOwner: UserRecord?, autoCreate: Bool
    ) throws(AccountError) -> FederationPlan {
        if let linked {
            if linked.disabled { throw AccountError(.userDisabled) }
            return .signIn(linked)
        }
        if let owner = emailOwner {
            guard trusted else { return .needConfirmation(owner) }
            if owner.disabled { throw AccountError(.userDisabled) }
            let recycled = owner.federated.contains { $0.providerID == assertion.providerID && $0.rawID != assertion.rawID }
            // The mailbox changed hands (another identity of this provider had it): strip as if unverified.
            if recycled || !owner.emailVerified {
                return .link(owner, strip: StripPlan(removePassword: true, revokeReason: .idpTakeoverProtection), emailRecycled: recycled)
            }
            return .link(owner, strip: nil, emailRecycled: false)
        }
        guard autoCreate else { throw AccountError(.userNotFound) }
        return .create
    }

    /// §A.9 steps 2–4, under the locks: the signed-in user `user` (its session still live), the
    /// user already holding the identity, and the user owning the assertion's email.
    package static func checkLink(
        _ assertion: IdPAssertion, user: UserRecord, identityOwner: String?, emailOwner: String?
    ) throws(AccountError) {
        if user.federated.contains(where: { $0.providerID == assertion.providerID }) { throw AccountError(.providerAlreadyLinked) }
        if let identityOwner, identityOwner != user.localID { throw AccountError(.federatedUserIDAlreadyLinked) }
        if let emailOwner, emailOwner != user.localID { throw AccountError(.emailExists) }
    }

    /// The `emailVerified` an account stores when it takes the assertion's email (a new account, or
    /// a linked account that had none): the assertion's, and only when the provider is trusted for
    /// that email (decision 10). An untrusted IdP's "verified" would otherwise leave a squatter a
    /// verified account that THE RULE, which strips only unverified ones, never reclaims.
    package static func storedEmailVerified(_ assertion: IdPAssertion, trusted: Bool) -> Bool {
        assertion.email != nil && assertion.emailVerified && trusted
    }

    /// §A.8 row 2: `user` once the assertion's identity is linked to it by its (now proven) email,
    /// after `strip` when THE RULE applies. The identity replaces any of its provider, the email
    /// is verified, the profile is the assertion's, and the email-link method goes with a strip.
    package static func linked(_ user: UserRecord, assertion: IdPAssertion, strip: StripPlan?, now: Date) -> UserRecord {
        var after = strip?.applied(to: user) ?? user
        if strip != nil { after.emailLinkSignin = false }
        after.federated.removeAll { $0.providerID == assertion.providerID }
        after.federated.append(assertion.identity(linkedAt: now))
        after.emailVerified = true
        after.displayName = assertion.displayName
        after.photoURL = assertion.photoURL
        after.anonymous = false
        after.lastLoginAt = now
        return after
    }

    /// §A.9 step 5: the signed-in `user` once the identity is linked. An account without an email
    /// takes the assertion's (verified as far as the provider is trusted); one with the same email
    /// has it proven when the provider is trusted for it.
    package static func linking(_ assertion: IdPAssertion, to user: UserRecord, trusted: Bool, now: Date) -> UserRecord {
        var after = user
        after.federated.append(assertion.identity(linkedAt: now))
        after.anonymous = false
        if after.email == nil, let email = assertion.email {
            after.email = email
            after.emailVerified = storedEmailVerified(assertion, trusted: trusted)
        } else if after.email != nil, after.email == assertion.email, trusted {
            after.emailVerified = true
        }
        return after
    }
}
