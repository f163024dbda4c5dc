/// How a mailbox was just proven to be the caller's.
package enum MailboxProof: Sendable, Equatable {
    /// An email sign-in link was completed.
    case emailLink
    /// A password reset was completed: the password is being replaced, not removed.
    case passwordReset
}

/// What THE RULE (identity-toolkit.md §4.4) removes from an account whose email was never verified, once its
/// mailbox is proven: everything attached while the address was unproven, since whoever attached
/// it may not own the mailbox (a squatter who signed up with the victim's address). Federated
/// links, the phone number and second factors always go, and every session is revoked.
package struct StripPlan: Sendable, Equatable {
    /// Remove the password (kept when a reset replaces it in the same transaction).
    package var removePassword: Bool
    /// Every session is revoked, for this reason.
    package var revokeReason: RevokeReason

    /// A plan.
    package init(removePassword: Bool, revokeReason: RevokeReason) {
        self.removePassword = removePassword
        self.revokeReason = revokeReason
    }

    /// Pending codes of every kind but these are retired; sign-in links stay usable.
    package static let keptCodeKinds: [ActionCodeKind] = [.emailSignIn]
}

extension StripPlan {
    /// `user` with what the plan removes removed: its federated links and phone number, its
    /// password unless kept, and a new credential version (codes and sessions are the store's).
    package func applied(to user: UserRecord) -> UserRecord {
        var stripped = user
        if removePassword { stripped.password = nil }
        stripped.federated = []
        stripped.phoneNumber = nil
        // Second factors enrolled while the address was unproven may be the squatter's
        // (mfa-phone-tenants.md §B.12).
        stripped.factors = []
        stripped.credentialVersion += 1
        return stripped
    }
}
