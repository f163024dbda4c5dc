package import Foundation

/// What spending an out-of-band code does to the account it was sent for (identity-toolkit.md
/// §4.4, §4.6), decided from the code and the account as the store read it under its row lock.
package enum MailboxChanges {
    /// `verifyEmail`: the address is proven.
    package static func verified(_ user: UserRecord) -> UserRecord {
        var after = user
        after.emailVerified = true
        return after
    }

    /// `verifyAndChangeEmail` and `recoverEmail`: the account takes `code`'s new address. A change
    /// proves the new mailbox; a recovery gives the old address back as it was, so an unproven
    /// address stays unproven (and THE RULE still applies to whoever proves it later).
    package static func emailReplaced(_ user: UserRecord, by code: ActionCodeRecord) throws(AccountError) -> UserRecord {
        guard let target = code.newEmail else { throw AccountError(.invalidOOBCode) }
        let verified = code.kind == .verifyAndChangeEmail || code.restoreEmailVerified
        return user.replacingEmail(with: target, verified: verified)
    }

    /// `resetPassword`: the new password, after `strip` when the email was never verified (the
    /// reset proves the mailbox: it becomes verified); a new credential version.
    package static func passwordReset(
        _ user: UserRecord, password: StoredPassword, strip: StripPlan?, now: Date
    ) -> UserRecord {
        var after = strip?.applied(to: user) ?? user
        after.password = PasswordCredential(stored: password, updatedAt: now)
        after.emailVerified = true
        after.credentialVersion += 1
        return after
    }
}
