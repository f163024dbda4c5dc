package import Foundation

/// Set, clear or keep an optional field.
package enum FieldChange<Value: Sendable & Equatable>: Sendable, Equatable {
    case keep
    case set(Value)
    case clear
}

/// One `accounts:update` worth of changes (identity-toolkit.md §4.7 B).
package struct UserChange: Sendable, Equatable {
    package var displayName: FieldChange<String> = .keep
    package var photoURL: FieldChange<String> = .keep
    /// A new, normalised email (`.clear` removes it).
    package var email: FieldChange<String> = .keep
    package var emailVerified: Bool?
    package var password: StoredPassword?
    package var deleteProviders: [String] = []
    /// An admin's link (§A.9): replaces the user's identity of that provider; nothing is revoked.
    package var linkIdentity: FederatedIdentity?
    package var phoneNumber: FieldChange<String> = .keep
    package var disabled: Bool?
    package var customAttributes: FieldChange<String> = .keep
    package var createdAt: Date?
    package var lastLoginAt: Date?
    /// An admin's second factors, replacing the account's (mfa-phone-tenants.md §B.13).
    package var factors: [MFAFactor]?
    /// `validSince` was sent: revoke every session now.
    package var revokeAll = false
    /// Codes and emails to store with the change (the recover notice of an email change).
    package var notices: [OutgoingCode] = []

    /// No change.
    package init() {}

    /// Whether the change gives the account a way to sign in (an email, a password, a phone number
    /// or a linked identity): an anonymous account stops being anonymous for good (decision 14).
    package var addsCredential: Bool {
        if case .set = email { return true }
        if case .set = phoneNumber { return true }
        return password != nil || linkIdentity != nil
    }

    /// Which fields changed, for the audit trail (values of secrets omitted).
    package var summary: [String: String] {
        var fields: [String: String] = [:]
        func note<T>(_ name: String, _ value: FieldChange<T>) {
            switch value {
            case .keep: break
            case .set(let v): fields[name] = "\(v)"
            case .clear: fields[name] = "(cleared)"
            }
        }
        note("displayName", displayName)
        note("photoUrl", photoURL)
        note("email", email)
        note("phoneNumber", phoneNumber)
        note("customAttributes", customAttributes)
        if let emailVerified { fields["emailVerified"] = String(emailVerified) }
        if password != nil { fields["password"] = "(changed)" }
        if !deleteProviders.isEmpty { fields["deleteProvider"] = deleteProviders.joined(separator: ",") }
        if let disabled { fields["disabled"] = String(disabled) }
        if revokeAll { fields["validSince"] = "(revoke all)" }
        if let factors { fields["mfa"] = factors.map(\.enrollmentID).joined(separator: ",") }
        return fields
    }
}

extension UserChange {
    /// Why applying this change to `user` revokes every session, if it does (identity-toolkit.md §4.7 B,
    /// §2.7): a new password, then a new email, then disabling an enabled account, then an explicit
    /// `validSince`; nil when no session is revoked.
    package func revokeReason(for user: UserRecord) -> RevokeReason? {
        if password != nil { return .passwordChanged }
        if email != .keep { return .emailChanged }
        if disabled == true && !user.disabled { return .userDisabled }
        if revokeAll { return .allSessionsRevoked }
        return nil
    }

    /// Whether the change alters what a token check reads of the user beyond a revocation (its
    /// disabled flag, its custom claims): every replica must forget what it holds of the user.
    package var changesTokenState: Bool {
        disabled != nil || customAttributes != .keep
    }
}
