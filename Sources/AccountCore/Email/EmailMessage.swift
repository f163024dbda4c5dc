/// What an email is for; each kind has its own template.
package enum EmailKind: String, Sendable, CaseIterable {
    /// `VERIFY_EMAIL`: confirm the address.
    case verifyEmail = "VERIFY_EMAIL"
    /// `PASSWORD_RESET`: choose a new password.
    case passwordReset = "PASSWORD_RESET"
    /// `EMAIL_SIGNIN`: the passwordless sign-in link.
    case emailSignIn = "EMAIL_SIGNIN"
    /// `VERIFY_AND_CHANGE_EMAIL`: sent to the new address to confirm the change.
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
    /// `RECOVER_EMAIL`: sent to the old address after a change, with a link to undo it.
    case recoverEmail = "RECOVER_EMAIL"
    /// `REVERT_SECOND_FACTOR_ADDITION`: a second factor was enrolled, with a link to remove it.
    case revertSecondFactorAddition = "REVERT_SECOND_FACTOR_ADDITION"
    /// A second factor was removed: a notice without a link.
    case mfaWithdrawn = "MFA_WITHDRAWN"
}

/// One email, ready for a transport. Holds an action link: it lives in the outbox only until sent.
package struct EmailMessage: Sendable, Equatable {
    package var kind: EmailKind
    package var to: String
    package var subject: String
    package var textBody: String
    package var htmlBody: String
    /// The action link the bodies carry (transports such as the webhook pass it on separately).
    package var link: String

    /// Creates a message.
    package init(kind: EmailKind, to: String, subject: String, textBody: String, htmlBody: String, link: String) {
        self.kind = kind
        self.to = to
        self.subject = subject
        self.textBody = textBody
        self.htmlBody = htmlBody
        self.link = link
    }
}
