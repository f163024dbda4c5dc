package import Foundation

/// Storage of email action codes and the changes they make, each one transaction (PostgreSQL).
/// Codes are looked up by the hash of their plaintext; the plaintext is never stored.
package protocol ActionCodeStore: Sendable {
    /// Stores a code and queues its email in one transaction. A code for an existing user is
    /// written under that user's row lock, after `precondition` is checked again there, and retires
    /// the user's earlier unspent codes of its kind.
    func store(_ code: OutgoingCode, precondition: IssuePrecondition?) async throws
    /// Reads a code without consuming it.
    func code(_ code: String) async throws -> ActionCodeRecord?
    /// Applies a `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL` or `RECOVER_EMAIL` code (identity-toolkit.md §4.7 A).
    /// `recover` is the recover code and notice a change sends to the old address.
    func apply(_ code: String, recover: OutgoingCode?, now: Date) async throws -> UserRecord
    /// Resets a password with a `PASSWORD_RESET` code (identity-toolkit.md §4.8).
    func resetPassword(_ code: String, password: StoredPassword, now: Date) async throws -> UserRecord
    /// Completes an email-link sign-in or link (identity-toolkit.md §4.4), THE RULE included. The store
    /// checks the code itself (kind, expiry, unspent, its email) as it spends it.
    func completeEmailLink(_ completion: EmailLinkCompletion) async throws -> (UserRecord, MintTicket?, isNewUser: Bool)
}
