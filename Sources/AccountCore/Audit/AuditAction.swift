/// What an audit event records: one closed vocabulary, spelled as the reference spells its events
/// (`IDP_CONFIG_CREATED`, `ACCOUNT_LOCKED`, federation-and-limits.md §B.4, §E.4): upper case, a noun
/// and what happened to it. Migration 0010 rewrote the dotted names older events carried.
package enum AuditAction: String, Sendable, CaseIterable {
    /// An account was created by a sign-up, an admin, an IdP or a custom token (admins' always recorded).
    case userCreated = "USER_CREATED"
    /// An admin changed an account.
    case userUpdated = "USER_UPDATED"
    /// An account was deleted.
    case userDeleted = "USER_DELETED"
    /// An admin imported an account (`batchCreate`).
    case userImported = "USER_IMPORTED"
    /// Some of an account's sessions were revoked (details: reason, session ids).
    case sessionsRevoked = "SESSIONS_REVOKED"
    /// Every session of an account was revoked and `validSince` moved (details: reason, count).
    case allSessionsRevoked = "ALL_SESSIONS_REVOKED"
    /// An IdP identity was linked to an account.
    case identityLinked = "IDENTITY_LINKED"
    /// A trusted IdP proved the mailbox of an unverified account: THE RULE stripped it, then linked.
    case identityLinkedAfterTakeover = "IDENTITY_LINKED_AFTER_TAKEOVER"
    /// A provider configuration changed (details: the field names, never values).
    case idpConfigCreated = "IDP_CONFIG_CREATED"
    case idpConfigUpdated = "IDP_CONFIG_UPDATED"
    case idpConfigDeleted = "IDP_CONFIG_DELETED"
    /// A custom-token signer was registered or removed.
    case customTokenSignerAdded = "CUSTOM_TOKEN_SIGNER_ADDED"
    case customTokenSignerRemoved = "CUSTOM_TOKEN_SIGNER_REMOVED"
    /// Password sign-in from one network class was locked, or an admin cleared the locks.
    case accountLocked = "ACCOUNT_LOCKED"
    case accountUnlocked = "ACCOUNT_UNLOCKED"
    /// The project configuration resource changed (details: the masked members).
    case projectConfigUpdated = "PROJECT_CONFIG_UPDATED"
    /// A phone number was linked to an account by a client (`signInWithPhoneNumber` with an ID token).
    case phoneLinked = "PHONE_LINKED"
    /// Second factors (mfa-phone-tenants.md §B): enrolled, withdrawn by the user, reverted from the
    /// notice's link (an operator's removal is an admin update, `USER_UPDATED` with `mfa`).
    case mfaEnrolled = "MFA_ENROLLED"
    case mfaWithdrawn = "MFA_WITHDRAWN"
    case mfaReverted = "MFA_REVERTED"
}
