import Foundation

/// What completing an email sign-in link does to the accounts, decided from what the store read
/// under the user's row lock; the store then writes it, in the same transaction.
package enum EmailLinkPlan: Sendable, Equatable {
    /// Link the address to the signed-in `user` (a proven mailbox and a proven session: nothing
    /// is stripped). `replacedEmail` is the address it replaces, when it changes: every session is
    /// revoked and the old address gets a recovery link.
    case link(UserRecord, replacedEmail: String?)
    /// Sign the address's account in; THE RULE's `strip` first when its email was never verified.
    case signIn(UserRecord, strip: StripPlan?)
    /// No account has the address: create one, its email verified.
    case create
}
