package import Foundation

/// What a verified IdP credential says about its user (federation-and-limits.md §A.4, "Extracted
/// assertion"). Kept, without any IdP token, behind a pending token (§A.6).
package struct IdPAssertion: Sendable, Equatable, Codable {
    package var providerID: String
    /// `sub`.
    package var rawID: String
    /// Lower-cased, when it passed §1.5.
    package var email: String?
    package var emailVerified: Bool
    package var displayName: String?
    package var photoURL: String?
    package var firstName: String?
    package var lastName: String?
    package var screenName: String?
    /// Google's `hd`.
    package var hostedDomain: String?
    /// The verified claims as a JSON object (Google: its userinfo shape).
    package var rawUserInfo: String
    /// The non-standard claims (`firebase.sign_in_attributes`), a JSON object; nil when none.
    package var signInAttributes: String?

    /// Creates an assertion.
    package init(
        providerID: String, rawID: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
        photoURL: String? = nil, firstName: String? = nil, lastName: String? = nil, screenName: String? = nil,
        hostedDomain: String? = nil, rawUserInfo: String = "{}", signInAttributes: String? = nil
    ) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.firstName = firstName
        self.lastName = lastName
        self.screenName = screenName
        self.hostedDomain = hostedDomain
        self.rawUserInfo = rawUserInfo
        self.signInAttributes = signInAttributes
    }

    /// `federatedId` (§A.4): Google's URL form, `<providerId>/<sub>` otherwise.
    package var federatedID: String {
        providerID == "google.com" ? "https://accounts.google.com/\(rawID)" : "\(providerID)/\(rawID)"
    }

    /// The assertion as a JSON object with its property names as keys (what `Codable` reads back),
    /// without Foundation's encoder: it is written with every federated sign-in.
    package var jsonText: String {
        var object: [String: JSONValue] = [
            "providerID": .string(providerID), "rawID": .string(rawID), "emailVerified": .bool(emailVerified),
            "rawUserInfo": .string(rawUserInfo),
        ]
        for (key, value) in [
            ("email", email), ("displayName", displayName), ("photoURL", photoURL), ("firstName", firstName), ("lastName", lastName),
            ("screenName", screenName), ("hostedDomain", hostedDomain), ("signInAttributes", signInAttributes),
        ] {
            if let value { object[key] = .string(value) }
        }
        return JSONValue.object(object).serialized()
    }

    /// The link this assertion makes.
    package func identity(linkedAt: Date) -> FederatedIdentity {
        FederatedIdentity(
            providerID: providerID, rawID: rawID, email: email, displayName: displayName, photoURL: photoURL, linkedAt: linkedAt)
    }
}

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
}
