package import Foundation

/// Second factors' persistence (mfa-phone-tenants.md §B). Every call is one transaction; a write
/// that a refusal must not undo (a counted failure) commits before the refusal is answered.
package protocol MFAStore: Sendable {
    /// A challenged first factor (§B.3): re-checks `read` under its lock (still enabled, same
    /// credential version, else `invalidPassword`/`userDisabled`/`userNotFound`), upgrades an
    /// imported password hash as a sign-in would, and writes the pending credential.
    func createPending(_ pending: NewPendingCredential, for read: UserRecord, upgradedPassword: StoredPassword?) async throws
    /// A pending credential by hash, unlocked; nil when unknown.
    func pending(hash: [UInt8]) async throws -> PendingCredentialRow?
    /// Counts a failed second factor on a pending credential.
    func pendingFailed(hash: [UInt8]) async throws
    /// A TOTP factor's sealed secret and newest accepted step.
    func totpSecret(localID: String, enrollmentID: String) async throws -> SealedTOTPSecret?
    /// Takes one of a factor's guesses (§B.11's `mfa_failures_per_factor`: 5, then one per 10
    /// minutes) in one atomic statement, before a code is compared; false when none is left. A
    /// right code gives it back in the sign-in's write.
    func reserveGuess(localID: String, enrollmentID: String, now: Date) async throws -> Bool

    /// Writes a TOTP enrolment between start and finalize (§B.5 step 11).
    func startTOTPEnrollment(_ enrollment: NewTOTPEnrollment) async throws
    /// A TOTP enrolment by hash, unlocked.
    func totpEnrollment(hash: [UInt8]) async throws -> TOTPEnrollmentRow?
    /// Counts a wrong code on a TOTP enrolment.
    func totpEnrollmentFailed(hash: [UInt8]) async throws
    /// Writes an SMS second-factor session (enrolment or sign-in) and its SMS (§B.5 step 10, §B.8).
    func startSMSChallenge(_ session: NewPhoneSession, binding: SMSChallengeBinding, sms: SealedSMS?) async throws

    /// `mfaEnrollment:finalize`'s transaction (§B.6 steps 3–5 and effects).
    func enroll(_ request: EnrollmentWrite) async throws -> MFAOutcome
    /// `mfaSignIn:finalize`'s transaction (§B.9 steps 3–6).
    func completeSignIn(_ request: SecondFactorSignIn) async throws -> MFAOutcome
    /// `mfaEnrollment:withdraw`'s transaction (§B.7).
    func withdraw(_ request: FactorWithdrawal) async throws -> MFAOutcome
}

/// What a pending credential will sign in as, about to be written (§B.4).
package struct NewPendingCredential: Sendable {
    package var hash: [UInt8]
    package var localID: String
    package var provider: String
    package var method: String
    package var signInAttributes: String?
    package var credentialVersion: Int64
    package var createdAt: Date
    package var expiresAt: Date

    package init(
        hash: [UInt8], localID: String, provider: String, method: String, signInAttributes: String?, credentialVersion: Int64,
        createdAt: Date, expiresAt: Date
    ) {
        self.hash = hash
        self.localID = localID
        self.provider = provider
        self.method = method
        self.signInAttributes = signInAttributes
        self.credentialVersion = credentialVersion
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A pending credential as read.
package struct PendingCredentialRow: Sendable, Equatable {
    package var localID: String
    package var provider: String
    package var method: String
    package var signInAttributes: String?
    package var credentialVersion: Int64
    package var failures: Int
    package var createdAt: Date
    package var expiresAt: Date
    package var used: Bool

    package init(
        localID: String, provider: String, method: String, signInAttributes: String?, credentialVersion: Int64, failures: Int,
        createdAt: Date, expiresAt: Date, used: Bool
    ) {
        self.localID = localID
        self.provider = provider
        self.method = method
        self.signInAttributes = signInAttributes
        self.credentialVersion = credentialVersion
        self.failures = failures
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.used = used
    }
}

/// A TOTP factor's secret as stored: sealed, with the newest step accepted.
package struct SealedTOTPSecret: Sendable, Equatable {
    package var sealed: [UInt8]
    package var lastStep: Int64?

    package init(sealed: [UInt8], lastStep: Int64?) {
        self.sealed = sealed
        self.lastStep = lastStep
    }
}

/// A TOTP enrolment about to be written: the sealed secret, bound to the user.
package struct NewTOTPEnrollment: Sendable {
    package var hash: [UInt8]
    package var localID: String
    package var sealedSecret: [UInt8]
    package var kekID: String
    package var createdAt: Date
    package var expiresAt: Date

    package init(hash: [UInt8], localID: String, sealedSecret: [UInt8], kekID: String, createdAt: Date, expiresAt: Date) {
        self.hash = hash
        self.localID = localID
        self.sealedSecret = sealedSecret
        self.kekID = kekID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A TOTP enrolment as read.
package struct TOTPEnrollmentRow: Sendable, Equatable {
    package var localID: String
    package var sealedSecret: [UInt8]
    package var attempts: Int
    package var expiresAt: Date
    package var used: Bool

    package init(localID: String, sealedSecret: [UInt8], attempts: Int, expiresAt: Date, used: Bool) {
        self.localID = localID
        self.sealedSecret = sealedSecret
        self.attempts = attempts
        self.expiresAt = expiresAt
        self.used = used
    }
}

/// What an SMS second-factor session is bound to (§0.2).
package enum SMSChallengeBinding: Sendable {
    /// Enrolment of the number by this user.
    case enrollment(localID: String)
    /// Sign-in: this pending credential, answering with this factor.
    case signIn(pendingHash: [UInt8], localID: String, enrollmentID: String)
}

/// A factor's guessing bound (§B.11, §A.8 `mfa_failures_per_factor`), kept on the factor's row so
/// that it holds with the abuse limits off and against parallel guesses.
package enum FactorGuesses {
    /// Guesses at once.
    package static let burst = 5
    /// One more per this many seconds.
    package static let period: TimeInterval = 600
    /// The refusal [FB-obs text].
    package static let exhausted = AccountError(.quotaExceeded, "Exceeded quota.")
}

/// How a second factor is proven inside the finalizing transaction.
package enum SecondFactorProof: Sendable {
    /// An SMS session and the MAC of the code presented with it.
    case sms(sessionHash: [UInt8], codeMAC: [UInt8])
    /// A TOTP code already checked against the secret: the step it proved. The transaction accepts
    /// it only if that step is still newer than the factor's last (compare-and-set, §B.9 step 6).
    case totp(enrollmentID: String, step: Int64)
    /// A TOTP enrolment whose code was checked: spent by the transaction (`hash`), the factor's
    /// secret sealed for it, first step.
    case totpEnrollment(hash: [UInt8], sealedSecret: [UInt8], kekID: String, step: Int64)
}

/// `mfaEnrollment:finalize`'s write.
package struct EnrollmentWrite: Sendable {
    package var localID: String
    package var guardSession: SessionGuard
    package var proof: SecondFactorProof
    package var enrollmentID: String
    package var displayName: String?
    /// The caller's replacement session (its second factor set to the new one).
    package var session: NewSession
    /// The revert code and notice, made by the service for the enrolled factor.
    package var notice: OutgoingCode?
    package var now: Date

    package init(
        localID: String, guardSession: SessionGuard, proof: SecondFactorProof, enrollmentID: String, displayName: String?,
        session: NewSession, notice: OutgoingCode?, now: Date
    ) {
        self.localID = localID
        self.guardSession = guardSession
        self.proof = proof
        self.enrollmentID = enrollmentID
        self.displayName = displayName
        self.session = session
        self.notice = notice
        self.now = now
    }
}

/// `mfaSignIn:finalize`'s write.
package struct SecondFactorSignIn: Sendable {
    package var pendingHash: [UInt8]
    package var proof: SecondFactorProof
    package var session: NewSession
    package var now: Date

    package init(pendingHash: [UInt8], proof: SecondFactorProof, session: NewSession, now: Date) {
        self.pendingHash = pendingHash
        self.proof = proof
        self.session = session
        self.now = now
    }
}

/// `mfaEnrollment:withdraw`'s write.
package struct FactorWithdrawal: Sendable {
    package var localID: String
    package var guardSession: SessionGuard
    package var enrollmentID: String
    package var session: NewSession
    package var notice: EmailMessage?
    package var now: Date

    package init(localID: String, guardSession: SessionGuard, enrollmentID: String, session: NewSession, notice: EmailMessage?, now: Date) {
        self.localID = localID
        self.guardSession = guardSession
        self.enrollmentID = enrollmentID
        self.session = session
        self.notice = notice
        self.now = now
    }
}

/// How a finalizing transaction ended.
package enum MFAOutcome: Sendable {
    /// The session was started; `secondFactor` is the factor it passed as the transaction found it
    /// (an SMS sign-in learns its factor from the session it spends).
    case signedIn(UserRecord, MintTicket, secondFactor: SecondFactorClaim?)
    /// Refused after a failure was recorded (a wrong code counted): the caller throws it.
    case refused(AccountError)
}
