package import Foundation

/// An enrolled second factor (mfa-phone-tenants.md §B.2), as every user read carries it. Never the
/// TOTP secret or its step counter: those are read only by the request that verifies a code.
package struct MFAFactor: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case phone = "PHONE"
        case totp = "TOTP"

        /// `firebase.sign_in_second_factor` of a session that passed this kind (§B.10).
        package var claim: String { self == .phone ? "phone" : "totp" }
    }

    /// A server-made UUID, or an admin-given id (1–128 printable ASCII).
    package var enrollmentID: String
    package var kind: Kind
    package var displayName: String?
    /// The canonical number of a phone factor.
    package var phoneNumber: String?
    package var enrolledAt: Date
    /// `enrolledAt` as an admin or an import gave it (or made it, to the millisecond), returned as
    /// given (correction 6); nil for a client's enrolment, shown with microseconds.
    package var enrolledAtText: String?

    package init(
        enrollmentID: String, kind: Kind, displayName: String? = nil, phoneNumber: String? = nil, enrolledAt: Date,
        enrolledAtText: String? = nil
    ) {
        self.enrolledAtText = enrolledAtText
        self.enrollmentID = enrollmentID
        self.kind = kind
        self.displayName = displayName
        self.phoneNumber = phoneNumber
        self.enrolledAt = enrolledAt
    }

    /// At most this many factors per user, at most one of them TOTP (§B.2).
    package static let maximumPerUser = 5

    /// Whether `id` can be an admin-given enrollment id: 1–128 printable ASCII.
    package static func isValidEnrollmentID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return (1...128).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }
}

/// The second factor a session passed (§B.10): carried by its ID tokens through every refresh.
package struct SecondFactorClaim: Sendable, Equatable {
    package var kind: MFAFactor.Kind
    package var enrollmentID: String

    package init(kind: MFAFactor.Kind, enrollmentID: String) {
        self.kind = kind
        self.enrollmentID = enrollmentID
    }
}

extension UserRecord {
    /// The factors a sign-in must answer now (§B.1): those of a kind the configuration enables. A
    /// user with none is not challenged, so turning a kind off never strands its users.
    package func challengingFactors(_ config: MFAConfig) -> [MFAFactor] {
        factors.filter { $0.kind == .phone ? config.smsEnabled : config.totpEnabled }
    }
}
