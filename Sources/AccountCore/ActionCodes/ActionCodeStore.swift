public import Foundation

/// Storage of email action codes and the changes they make, each one transaction (PostgreSQL).
/// Codes are looked up by the hash of their plaintext; the plaintext is never stored.
package protocol ActionCodeStore: Sendable {
    /// Stores the codes and queues their emails in one transaction.
    func store(_ codes: [OutgoingCode]) async throws
    /// Reads a code without consuming it.
    func code(_ code: String) async throws -> ActionCodeRecord?
    /// Applies a `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL` or `RECOVER_EMAIL` code (reference §4.7 A).
    /// `recover` is the recover code and notice a change sends to the old address.
    func apply(_ code: String, recover: OutgoingCode?, now: Date) async throws -> UserRecord
    /// Resets a password with a `PASSWORD_RESET` code (reference §4.8).
    func resetPassword(_ code: String, password: StoredPassword, now: Date) async throws -> UserRecord
    /// Completes an email-link sign-in or link (reference §4.4), THE RULE included. The store
    /// checks the code itself (kind, expiry, unspent, its email) as it spends it.
    func completeEmailLink(_ completion: EmailLinkCompletion) async throws -> (UserRecord, MintTicket, isNewUser: Bool)
}

/// An email-link completion's inputs.
package struct EmailLinkCompletion: Sendable {
    package var code: String
    /// The normalised email the caller sent (must equal the code's).
    package var email: String
    /// The id a new user gets if none has the email.
    package var newLocalID: String
    /// The signed-in user to link to, with the guard of their session.
    package var linkTo: (localID: String, guardSession: SessionGuard)?
    package var session: NewSession
    /// The recover code and notice for the old address, when linking changes a user's email.
    package var recover: OutgoingCode?
    package var now: Date

    /// Creates a completion.
    package init(
        code: String, email: String, newLocalID: String, linkTo: (localID: String, guardSession: SessionGuard)?, session: NewSession,
        recover: OutgoingCode?, now: Date
    ) {
        self.code = code
        self.email = email
        self.newLocalID = newLocalID
        self.linkTo = linkTo
        self.session = session
        self.recover = recover
        self.now = now
    }
}
