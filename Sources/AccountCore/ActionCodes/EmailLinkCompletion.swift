package import Foundation

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
    /// A pending credential to write instead of the session when the user signing in is challenged
    /// (mfa-phone-tenants.md §B.3), after THE RULE.
    package var challenge: ChallengeDraft?
    package var now: Date

    /// Creates a completion.
    package init(
        code: String, email: String, newLocalID: String, linkTo: (localID: String, guardSession: SessionGuard)?, session: NewSession,
        recover: OutgoingCode?, challenge: ChallengeDraft? = nil, now: Date
    ) {
        self.challenge = challenge
        self.code = code
        self.email = email
        self.newLocalID = newLocalID
        self.linkTo = linkTo
        self.session = session
        self.recover = recover
        self.now = now
    }
}

/// What a code for an existing user was decided on, checked again under the user's row lock in the
/// transaction that writes the code: a change of identity committed in between (the stripping rule,
/// a password change, an email change, a revocation) refuses the code instead of letting it outlive
/// that change.
package struct IssuePrecondition: Sendable, Equatable {
    package var localID: String
    /// The caller's session, when an ID token asked for the code: still live, token not older than V.
    package var session: SessionGuard?
    /// The user's credential version as read (every strip and password change moves it).
    package var credentialVersion: Int64
    /// The user's address as read (the code is bound to it).
    package var email: String

    /// Creates a precondition.
    package init(localID: String, session: SessionGuard?, credentialVersion: Int64, email: String) {
        self.localID = localID
        self.session = session
        self.credentialVersion = credentialVersion
        self.email = email
    }
}
