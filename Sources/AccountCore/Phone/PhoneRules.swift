package import Foundation

/// The decisions of phone sign-in (mfa-phone-tenants.md §A.5), taken on what the store read and
/// locked; the store writes what they decide, in the same transaction.
package enum PhoneRules {
    /// Wrong codes a session survives; the fifth kills it (§0.2).
    package static let maximumAttempts = 5

    /// What a presented session and code come to (§A.5 step 2).
    package enum SessionCheck: Equatable, Sendable {
        /// The code is right: the number is proven.
        case proven(String)
        /// The code is wrong: count the attempt (and keep it, whatever follows), answer `INVALID_CODE`.
        case wrongCode
        case refused(AccountError.Code)
    }

    /// Step 2 for a session: unknown, used, or of another purpose → `INVALID_SESSION_INFO`; expired
    /// or killed by five wrong codes → `SESSION_EXPIRED`; a wrong code → counted.
    package static func check(
        _ row: PhoneSessionRow?, presentedMAC: [UInt8], purpose: PhoneSessionPurpose, now: Date
    ) -> SessionCheck {
        guard let row, !row.used, row.purpose == purpose else { return .refused(.invalidSessionInfo) }
        if row.expiresAt <= now || row.attempts >= maximumAttempts { return .refused(.sessionExpired) }
        guard ConstantTime.equal(row.codeMAC, presentedMAC) else { return .wrongCode }
        return .proven(row.phoneNumber)
    }

    /// Step 2 for a `temporaryProof`: unknown, used, expired, or bound to another number →
    /// `INVALID_TEMPORARY_PROOF`.
    package static func check(_ row: TemporaryProofRow?, phoneNumber: String, now: Date) throws(AccountError) -> String {
        guard let row, !row.used, row.expiresAt > now, row.phoneNumber == phoneNumber else {
            throw AccountError(.invalidTemporaryProof)
        }
        return row.phoneNumber
    }

    /// A number cannot be the first factor of a user with second factors (§A.4 step 5, §A.5).
    package static let unsupportedFirstFactor = AccountError(
        .unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user.")

    /// What a sign-in with a proven number does.
    package enum SignInStep: Equatable, Sendable {
        case create
        case signIn(UserRecord)
    }

    /// §A.5 "Sign-in": the owner of the number signs in; none creates one, unless this is a
    /// reauthentication, which needs the account to exist.
    package static func signIn(owner: UserRecord?, reauthentication: Bool) throws(AccountError) -> SignInStep {
        guard let owner else {
            if reauthentication { throw AccountError(.userNotFound) }
            return .create
        }
        if owner.disabled { throw AccountError(.userDisabled) }
        if !owner.factors.isEmpty { throw unsupportedFirstFactor }
        return .signIn(owner)
    }

    /// What a link with a proven number does.
    package enum LinkStep: Equatable, Sendable {
        /// The caller's phone becomes the number.
        case link
        /// Someone else owns the number; proven by a session, the answer is a `temporaryProof`.
        case mintProof
    }

    /// §A.5 "Link" steps 2–3 (the caller's session is checked by the store before).
    package static func link(caller: UserRecord, owner: UserRecord?, provenByProof: Bool) throws(AccountError) -> LinkStep {
        if caller.disabled { throw AccountError(.userDisabled) }
        if !caller.factors.isEmpty { throw unsupportedFirstFactor }
        guard let owner, owner.localID != caller.localID else { return .link }
        if provenByProof { throw AccountError(.phoneNumberExists) }
        return .mintProof
    }

    /// The account after a link: the number is its phone (replacing another), and it is no longer
    /// anonymous (§A.5 link step 4).
    package static func linked(_ user: UserRecord, phoneNumber: String) -> UserRecord {
        var user = user
        user.phoneNumber = phoneNumber
        user.anonymous = false
        return user
    }
}
