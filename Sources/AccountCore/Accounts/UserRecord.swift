package import Foundation

/// An account as the domain sees it. Never encoded to JSON directly: it holds the password hash.
package struct UserRecord: Sendable, Equatable {
    package var localID: String
    /// Lower-case.
    package var email: String?
    package var emailVerified: Bool
    /// An email-link sign-in completed for the current email.
    package var emailLinkSignin: Bool
    package var initialEmail: String?
    package var displayName: String?
    package var photoURL: String?
    package var phoneNumber: String?
    package var disabled: Bool
    /// The custom claims, a JSON object serialised.
    package var customAttributes: String?
    package var customAuth: Bool
    /// Created by anonymous sign-up and has gained no credential since (decision 14): recorded,
    /// never derived, so losing a credential never makes an account anonymous.
    package var anonymous: Bool
    package var createdAt: Date
    package var lastLoginAt: Date?
    package var lastRefreshAt: Date?
    /// V of identity-toolkit.md §3.5, whole seconds.
    package var validSince: Int64
    /// R of identity-toolkit.md §3.5: the last revoke-all instant.
    package var tokensValidAfter: Date
    /// Bumped whenever the password changes or is removed.
    package var credentialVersion: Int64
    /// The password credential, if any.
    package var password: PasswordCredential?
    /// Linked federated identities, in link order.
    package var federated: [FederatedIdentity]
    /// Enrolled second factors, in enrolment order (mfa-phone-tenants.md §B.2).
    package var factors: [MFAFactor]

    /// Creates a record.
    package init(
        localID: String, email: String? = nil, emailVerified: Bool = false, emailLinkSignin: Bool = false,
        initialEmail: String? = nil, displayName: String? = nil, photoURL: String? = nil, phoneNumber: String? = nil,
        disabled: Bool = false, customAttributes: String? = nil, customAuth: Bool = false, anonymous: Bool = false, createdAt: Date,
        lastLoginAt: Date? = nil, lastRefreshAt: Date? = nil, validSince: Int64, tokensValidAfter: Date,
        credentialVersion: Int64 = 0, password: PasswordCredential? = nil, federated: [FederatedIdentity] = [],
        factors: [MFAFactor] = []
    ) {
        self.localID = localID
        self.email = email
        self.emailVerified = emailVerified
        self.emailLinkSignin = emailLinkSignin
        self.initialEmail = initialEmail
        self.displayName = displayName
        self.photoURL = photoURL
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.customAttributes = customAttributes
        self.customAuth = customAuth
        self.anonymous = anonymous
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.lastRefreshAt = lastRefreshAt
        self.validSince = validSince
        self.tokensValidAfter = tokensValidAfter
        self.credentialVersion = credentialVersion
        self.password = password
        self.federated = federated
        self.factors = factors
    }

    /// Sign-in methods (identity-toolkit.md §2.4): `password` iff a hash exists, `emailLink` iff an email-link
    /// sign-in completed, then federated provider ids. Never phone.
    package var signinMethods: [String] {
        var methods: [String] = []
        if password != nil { methods.append("password") }
        if emailLinkSignin { methods.append("emailLink") }
        methods.append(contentsOf: federated.map(\.providerID))
        return methods
    }

    /// Whether the `password` provider exists: an email and (a hash or an email-link sign-in).
    package var hasPasswordProvider: Bool {
        email != nil && (password != nil || emailLinkSignin)
    }

    /// Providers (identity-toolkit.md §2.4): `password` when that provider exists, then federated ids.
    package var allProviders: [String] {
        (hasPasswordProvider ? ["password"] : []) + federated.map(\.providerID)
    }

    /// Whether the account is an anonymous user's: made by anonymous sign-up, and still without any
    /// way to sign in but its session. An account that had a credential and lost it is not.
    package var isAnonymous: Bool {
        anonymous && email == nil && phoneNumber == nil && password == nil && federated.isEmpty && !customAuth
    }

    /// The custom claims as an object (empty when none or unparsable).
    package var customClaims: [String: JSONValue] {
        guard let customAttributes, let value = try? JSONValue.parse(customAttributes), let object = value.objectValue
        else { return [:] }
        return object
    }
}

/// A stored password and when it was set.
package struct PasswordCredential: Sendable, Equatable {
    package var stored: StoredPassword
    package var updatedAt: Date

    /// Creates a credential.
    package init(stored: StoredPassword, updatedAt: Date) {
        self.stored = stored
        self.updatedAt = updatedAt
    }
}

/// A linked identity of a federated provider.
package struct FederatedIdentity: Sendable, Equatable {
    package var providerID: String
    package var rawID: String
    package var email: String?
    package var displayName: String?
    package var photoURL: String?
    package var linkedAt: Date

    /// Creates a link.
    package init(
        providerID: String, rawID: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil, linkedAt: Date
    ) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
        self.linkedAt = linkedAt
    }
}
