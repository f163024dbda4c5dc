package import Foundation

/// What a phone verification session proves a number for (mfa-phone-tenants.md §0.3).
package enum PhoneSessionPurpose: String, Sendable {
    case signIn = "SIGN_IN"
    case mfaEnrollment = "MFA_ENROLL"
    case mfaSignIn = "MFA_SIGN_IN"

    /// The `purpose` an SMS webhook names (the `sms_type` of the blocking hooks, §A.7).
    package var smsPurpose: String {
        switch self {
        case .signIn: "SIGN_IN_OR_SIGN_UP"
        case .mfaEnrollment: "MULTI_FACTOR_ENROLLMENT"
        case .mfaSignIn: "MULTI_FACTOR_SIGN_IN"
        }
    }
}

/// A verification session about to be written (§A.4 step 8). The `sessionInfo` and the code never
/// reach the store: only the session's hash and the code's MAC (§0.2), unless the demo test inbox
/// is on (§A.7), which keeps them for its listing.
package struct NewPhoneSession: Sendable {
    package var sessionHash: [UInt8]
    package var codeMAC: [UInt8]
    package var phoneNumber: String
    package var purpose: PhoneSessionPurpose
    package var testNumber: Bool
    package var createdAt: Date
    package var expiresAt: Date
    /// The raw `sessionInfo` and code, only for the demo test inbox.
    package var inbox: (sessionInfo: String, code: String)?

    package init(
        sessionHash: [UInt8], codeMAC: [UInt8], phoneNumber: String, purpose: PhoneSessionPurpose, testNumber: Bool, createdAt: Date,
        expiresAt: Date, inbox: (sessionInfo: String, code: String)? = nil
    ) {
        self.sessionHash = sessionHash
        self.codeMAC = codeMAC
        self.phoneNumber = phoneNumber
        self.purpose = purpose
        self.testNumber = testNumber
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.inbox = inbox
    }
}

/// A verification session as the store read it, locked.
package struct PhoneSessionRow: Sendable, Equatable {
    package var phoneNumber: String
    package var purpose: PhoneSessionPurpose
    package var codeMAC: [UInt8]
    package var attempts: Int
    package var expiresAt: Date
    package var used: Bool

    package init(phoneNumber: String, purpose: PhoneSessionPurpose, codeMAC: [UInt8], attempts: Int, expiresAt: Date, used: Bool) {
        self.phoneNumber = phoneNumber
        self.purpose = purpose
        self.codeMAC = codeMAC
        self.attempts = attempts
        self.expiresAt = expiresAt
        self.used = used
    }
}

/// A `temporaryProof` as the store read it, locked (§A.5).
package struct TemporaryProofRow: Sendable, Equatable {
    package var phoneNumber: String
    package var expiresAt: Date
    package var used: Bool

    package init(phoneNumber: String, expiresAt: Date, used: Bool) {
        self.phoneNumber = phoneNumber
        self.expiresAt = expiresAt
        self.used = used
    }
}

/// What proves the number of a `signInWithPhoneNumber` (§A.5 step 2).
package enum PhoneProof: Sendable {
    /// A verification session and the MAC of the code presented with it.
    case session(hash: [UInt8], codeMAC: [UInt8])
    /// A `temporaryProof` minted by an earlier refused link, and the number presented with it.
    case temporaryProof(hash: [UInt8], phoneNumber: String)
}

/// A phone sign-in, as the store carries it out (§A.5 "Sign-in").
package struct PhoneSignIn: Sendable {
    package var proof: PhoneProof
    /// `operation: "REAUTH"`: an unknown number is `USER_NOT_FOUND`, not a new account.
    package var reauthentication: Bool
    package var newLocalID: String
    package var session: NewSession
    /// Whether creating an account was already counted against the client's address.
    package var creationAdmitted: Bool
    package var now: Date

    package init(proof: PhoneProof, reauthentication: Bool, newLocalID: String, session: NewSession, creationAdmitted: Bool, now: Date) {
        self.proof = proof
        self.reauthentication = reauthentication
        self.newLocalID = newLocalID
        self.session = session
        self.creationAdmitted = creationAdmitted
        self.now = now
    }
}

/// A phone link to a signed-in account (§A.5 "Link").
package struct PhoneLink: Sendable {
    package var proof: PhoneProof
    /// The caller, as its ID token said; nil when the token was refused (``refusal``).
    package var caller: (localID: String, guardSession: SessionGuard)?
    /// The caller's refusal (a bad or stale ID token): answered only once the proof holds, since
    /// §A.5 checks the proof first; the proof then stays unspent.
    package var refusal: AccountError?
    package var session: NewSession
    /// The hash of the `temporaryProof` to mint if the number is someone else's, and its expiry.
    package var newProofHash: [UInt8]
    package var proofExpiresAt: Date
    package var now: Date

    package init(
        proof: PhoneProof, caller: (localID: String, guardSession: SessionGuard)?, refusal: AccountError?, session: NewSession,
        newProofHash: [UInt8], proofExpiresAt: Date,
        now: Date
    ) {
        self.proof = proof
        self.caller = caller
        self.refusal = refusal
        self.session = session
        self.newProofHash = newProofHash
        self.proofExpiresAt = proofExpiresAt
        self.now = now
    }
}

/// How a phone sign-in or link ended.
package enum PhoneOutcome: Sendable {
    case signedIn(UserRecord, MintTicket, isNewUser: Bool)
    /// The number is another account's: the session was spent on a `temporaryProof` (§A.5 link step 3).
    case numberOwnedElsewhere(phoneNumber: String)
    /// The sign-in would create an account not yet counted against the client's address.
    case creationNeedsAdmission
    /// Refused after the refusal was recorded (a wrong code counted): the caller throws it.
    case refused(AccountError)
}

/// One entry of the demo test inbox (§A.7).
package struct InboxCode: Sendable, Equatable {
    package var phoneNumber: String
    package var sessionInfo: String
    package var code: String

    package init(phoneNumber: String, sessionInfo: String, code: String) {
        self.phoneNumber = phoneNumber
        self.sessionInfo = sessionInfo
        self.code = code
    }
}
