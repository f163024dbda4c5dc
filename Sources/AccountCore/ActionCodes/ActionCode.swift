package import Foundation

/// The kinds of email action code (identity-toolkit.md §2.6).
package enum ActionCodeKind: String, Sendable, CaseIterable {
    case passwordReset = "PASSWORD_RESET"
    case verifyEmail = "VERIFY_EMAIL"
    case emailSignIn = "EMAIL_SIGNIN"
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
    case recoverEmail = "RECOVER_EMAIL"
    /// Undoes one second-factor enrolment (mfa-phone-tenants.md §B.12), sent in its notice.
    case revertSecondFactorAddition = "REVERT_SECOND_FACTOR_ADDITION"

    /// The `mode` of the action link.
    package var mode: String {
        switch self {
        case .passwordReset: "resetPassword"
        case .verifyEmail: "verifyEmail"
        case .emailSignIn: "signIn"
        case .verifyAndChangeEmail: "verifyAndChangeEmail"
        case .recoverEmail: "recoverEmail"
        case .revertSecondFactorAddition: "revertSecondFactorAddition"
        }
    }

    /// The request types a caller may ask for, by name or by Identity Toolkit's enum index.
    package init?(requestType: String) {
        switch requestType {
        case "PASSWORD_RESET", "1": self = .passwordReset
        case "VERIFY_EMAIL", "4": self = .verifyEmail
        case "EMAIL_SIGNIN", "6": self = .emailSignIn
        case "VERIFY_AND_CHANGE_EMAIL", "7": self = .verifyAndChangeEmail
        default: return nil
        }
    }

    /// The email template of the kind.
    package var emailKind: EmailKind {
        EmailKind(rawValue: rawValue)!
    }
}

/// Lifetimes of codes (identity-toolkit.md §2.6; configurable).
package struct ActionCodeLifetimes: Sendable, Equatable {
    package var passwordReset: TimeInterval = 3600
    package var verifyEmail: TimeInterval = 3 * 86400
    package var emailSignIn: TimeInterval = 6 * 3600
    package var verifyAndChangeEmail: TimeInterval = 86400
    package var recoverEmail: TimeInterval = 3 * 86400
    package var revertSecondFactorAddition: TimeInterval = 3 * 86400

    /// Reference defaults.
    package init() {}

    /// The lifetime of `kind`.
    package func lifetime(of kind: ActionCodeKind) -> TimeInterval {
        switch kind {
        case .passwordReset: passwordReset
        case .verifyEmail: verifyEmail
        case .emailSignIn: emailSignIn
        case .verifyAndChangeEmail: verifyAndChangeEmail
        case .recoverEmail: recoverEmail
        case .revertSecondFactorAddition: revertSecondFactorAddition
        }
    }
}

/// A code about to be stored: the plaintext leaves with the link, only its hash is kept.
package struct NewActionCode: Sendable, Equatable {
    /// 32 random bytes, base64url (43 characters).
    package var code: String
    package var kind: ActionCodeKind
    package var localID: String?
    /// The address the code is bound to (lower-case).
    package var email: String
    /// For change codes the new address; for recover codes the address to restore.
    package var newEmail: String?
    package var settingsJSON: String
    package var lang: String
    package var createdAt: Date
    package var expiresAt: Date
    /// For `REVERT_SECOND_FACTOR_ADDITION`: the enrolment it undoes.
    package var enrollmentID: String?

    /// Creates a code with fresh randomness.
    package init(
        random: any RandomSource, kind: ActionCodeKind, localID: String?, email: String, newEmail: String?, settingsJSON: String,
        lang: String, now: Date, lifetimes: ActionCodeLifetimes
    ) {
        self.code = Base64URL.encode(random.bytes(32))
        self.kind = kind
        self.localID = localID
        self.email = email
        self.newEmail = newEmail
        self.settingsJSON = settingsJSON
        self.lang = lang
        self.createdAt = now
        self.expiresAt = now.addingTimeInterval(lifetimes.lifetime(of: kind))
    }
}

/// A stored code as read back (never the plaintext).
package struct ActionCodeRecord: Sendable, Equatable {
    package var kind: ActionCodeKind
    package var localID: String?
    package var email: String
    package var newEmail: String?
    package var lang: String
    package var expiresAt: Date
    package var usedAt: Date?
    /// For `RECOVER_EMAIL`: whether the address it restores was verified before the change.
    package var restoreEmailVerified: Bool
    /// For `REVERT_SECOND_FACTOR_ADDITION`: the enrolment it undoes.
    package var enrollmentID: String?
    /// For a checked `REVERT_SECOND_FACTOR_ADDITION`: the factor as it stands (its `mfaInfo`).
    package var factor: MFAFactor?

    /// Creates a record.
    package init(
        kind: ActionCodeKind, localID: String?, email: String, newEmail: String?, lang: String, expiresAt: Date, usedAt: Date?,
        restoreEmailVerified: Bool = false
    ) {
        self.restoreEmailVerified = restoreEmailVerified
        self.kind = kind
        self.localID = localID
        self.email = email
        self.newEmail = newEmail
        self.lang = lang
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }

    /// `INVALID_OOB_CODE` when used or not one of `kinds`, `EXPIRED_OOB_CODE` when expired.
    package func requireUsable(kinds: Set<ActionCodeKind>, now: Date) throws(AccountError) {
        guard usedAt == nil, kinds.contains(kind) else { throw AccountError(.invalidOOBCode) }
        guard expiresAt > now else { throw AccountError(.expiredOOBCode) }
    }
}

/// A code together with the email that carries it, written in one transaction.
package struct OutgoingCode: Sendable, Equatable {
    package var code: NewActionCode
    /// `nil` when the admin asked for the link back instead.
    package var email: EmailMessage?

    /// Pairs a code with its email.
    package init(code: NewActionCode, email: EmailMessage?) {
        self.code = code
        self.email = email
    }
}

extension OutgoingCode {
    /// The `RECOVER_EMAIL` code and notice sent to `oldEmail` after an account's email changed to
    /// `currentEmail` (identity-toolkit.md §4.7): its link restores the old address.
    package static func recoverNotice(
        settings: ProjectSettings, random: any RandomSource, now: Date, localID: String, currentEmail: String, oldEmail: String,
        lang: String, apiKey: String
    ) -> OutgoingCode {
        let code = NewActionCode(
            random: random, kind: .recoverEmail, localID: localID, email: currentEmail, newEmail: oldEmail, settingsJSON: "{}",
            lang: lang, now: now, lifetimes: settings.codeLifetimes
        )
        let link = ActionCodeSettings().link(kind: .recoverEmail, code: code.code, apiKey: apiKey, lang: lang, project: settings)
        let message = EmailTemplates.message(
            kind: .recoverEmail, to: oldEmail, link: link, lang: lang, productName: settings.productName, newEmail: currentEmail
        )
        return OutgoingCode(code: code, email: message)
    }
}
