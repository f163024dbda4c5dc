import Foundation

/// Why a session ended (identity-toolkit.md §2.7).
package enum RevokeReason: String, Sendable, CaseIterable {
    case adminRevoked = "ADMIN_REVOKED"
    case allSessionsRevoked = "ALL_SESSIONS_REVOKED"
    case passwordChanged = "PASSWORD_CHANGED"
    case passwordReset = "PASSWORD_RESET"
    case emailChanged = "EMAIL_CHANGED"
    case emailLinkTakeoverProtection = "EMAIL_LINK_TAKEOVER_PROTECTION"
    /// A trusted IdP proved the mailbox of an account whose email was never verified (federation-and-limits.md §A.8).
    case idpTakeoverProtection = "IDP_TAKEOVER_PROTECTION"
    case userDisabled = "USER_DISABLED"
    case userDeleted = "USER_DELETED"
    case refreshTokenReuse = "REFRESH_TOKEN_REUSE"
    case accountOverwritten = "ACCOUNT_OVERWRITTEN"
    case idleTimeout = "IDLE_TIMEOUT"
    case expired = "EXPIRED"
    /// A second factor was enrolled or withdrawn, or an enrolment reverted (mfa-phone-tenants.md §B.6, §B.7, §B.12).
    case mfaEnrolled = "MFA_ENROLLED"
    case mfaWithdrawn = "MFA_WITHDRAWN"
    case mfaReverted = "MFA_REVERTED"

    /// Sessions ended because the mailbox's owner proved it (THE RULE) or reset the password: they
    /// may have been a squatter's, so they prove nothing about where the owner signs in from (the
    /// known-network test of federation-and-limits.md §E.4 ignores them, decision 15).
    package static let disowned: [RevokeReason] = [.emailLinkTakeoverProtection, .idpTakeoverProtection, .passwordReset]
}
