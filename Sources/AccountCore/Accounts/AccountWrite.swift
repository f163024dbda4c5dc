package import Foundation

/// What one change writes to an account, decided from the change and the account as the store read
/// it under its row lock. The store writes ``user``'s fields as they are and carries out the
/// effects in the same transaction; revoking sessions is the caller's.
package struct AccountWrite: Sendable, Equatable {
    /// The account after the change (its password and links included, as a read would return them).
    package var user: UserRecord
    /// A new password to store; every unspent password-reset code is retired with it.
    package var newPassword: StoredPassword?
    /// The password credential is deleted.
    package var removesPassword = false
    /// Federated providers unlinked.
    package var unlinks: [String] = []
    /// An admin's link, replacing the account's identity of that provider.
    package var link: FederatedIdentity?
    /// An admin's set of second factors, replacing the account's (mfa-phone-tenants.md §B.13).
    package var factors: [MFAFactor]?

    /// The account unchanged.
    package init(user: UserRecord) {
        self.user = user
    }
}

extension UserChange {
    /// What this change writes to `user` (identity-toolkit.md §4.7 B effects): a new email resets
    /// verification unless `emailVerified` came with it, the email-link method survives only with
    /// its address and the password provider, a new password and a removed one each start a new
    /// credential version, a credential ends anonymity for good (decision 14), and removing the
    /// `phone` provider clears the number.
    package func write(on user: UserRecord, now: Date) -> AccountWrite {
        var after = user
        after.displayName = displayName.applied(to: after.displayName)
        after.photoURL = photoURL.applied(to: after.photoURL)
        after.phoneNumber = deleteProviders.contains("phone") ? nil : phoneNumber.applied(to: after.phoneNumber)
        after.customAttributes = customAttributes.applied(to: after.customAttributes)
        switch email {
        case .keep: after.emailVerified = emailVerified ?? after.emailVerified
        case .set(let address): after = after.replacingEmail(with: address, verified: emailVerified ?? false)
        case .clear:
            after.email = nil
            after.emailVerified = false
            after.emailLinkSignin = false
        }
        let removesPassword = deleteProviders.contains("password")
        if removesPassword { after.emailLinkSignin = false }
        after.credentialVersion += (password == nil ? 0 : 1) + (removesPassword ? 1 : 0)
        if addsCredential { after.anonymous = false }
        after.disabled = disabled ?? after.disabled
        after.createdAt = createdAt ?? after.createdAt
        after.lastLoginAt = lastLoginAt ?? after.lastLoginAt
        if let factors {
            after.factors = factors
            // Pending credentials issued before die; nothing is revoked (§B.12: the admin is authoritative).
            after.credentialVersion += 1
        }
        if let password { after.password = PasswordCredential(stored: password, updatedAt: now) }
        if removesPassword { after.password = nil }
        let unlinks = deleteProviders.filter { $0 != "password" && $0 != "phone" }
        after.federated.removeAll { unlinks.contains($0.providerID) }
        var link = linkIdentity
        if var identity = link {
            identity.linkedAt = now
            after.federated.removeAll { $0.providerID == identity.providerID }
            after.federated.append(identity)
            link = identity
        }
        var write = AccountWrite(user: after)
        write.newPassword = password
        write.removesPassword = removesPassword
        write.unlinks = unlinks
        write.link = link
        write.factors = factors
        return write
    }
}

extension FieldChange {
    /// The field's value after the change.
    package func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .set(let value): value
        case .clear: nil
        }
    }
}
