package import Foundation

/// One second factor as an admin sends it (mfa-phone-tenants.md §B.13): Node's
/// `multiFactor.enrolledFactors` on create and update, `mfaInfo` of an import.
package struct AdminFactorInput: Sendable, Equatable {
    package var enrollmentID: String?
    package var phoneInfo: String?
    /// A `totpInfo` member was present.
    package var totp: Bool
    package var displayName: String?
    /// `enrolledAt` as sent (RFC 3339); returned as given.
    package var enrolledAt: Date?
    /// Its text as sent.
    package var enrolledAtText: String?

    package init(
        enrollmentID: String? = nil, phoneInfo: String? = nil, totp: Bool = false, displayName: String? = nil, enrolledAt: Date? = nil,
        enrolledAtText: String? = nil
    ) {
        self.enrolledAtText = enrolledAtText
        self.enrollmentID = enrollmentID
        self.phoneInfo = phoneInfo
        self.totp = totp
        self.displayName = displayName
        self.enrolledAt = enrolledAt
    }
}

/// The rules of admin-written factors (§B.13). Their instants have millisecond precision
/// (correction 6).
package enum AdminFactors {
    /// An admin factor's instant and its text: as given, else `now` to the millisecond.
    static func enrolled(_ entry: AdminFactorInput, now: Date) -> (Date, String) {
        if let given = entry.enrolledAt, let text = entry.enrolledAtText { return (given, text) }
        let instant = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        return (instant, instant.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))
    }

    /// Admin create: ids and `enrolledAt` ignored (generated), the same phone de-duplicated, a TOTP
    /// entry refused, at most five.
    package static func forCreate(_ entries: [AdminFactorInput], now: Date, newID: () -> String) throws(AccountError) -> [MFAFactor] {
        var factors: [MFAFactor] = []
        for entry in entries {
            if entry.totp { throw unsupportedTOTP }
            let number = try phone(entry)
            if factors.contains(where: { $0.phoneNumber == number }) { continue }
            // Ids and instants given on create are ignored [EMU].
            let (at, text) = enrolled(AdminFactorInput(), now: now)
            factors.append(
                MFAFactor(
                    enrollmentID: newID(), kind: .phone, displayName: entry.displayName, phoneNumber: number, enrolledAt: at,
                    enrolledAtText: text)
            )
        }
        return try limited(factors)
    }

    /// Admin update: the whole set replaced. An entry without an id gets a new one; an entry with
    /// the id of an existing factor keeps it (a TOTP factor only as TOTP); a new TOTP entry is
    /// refused; one id for two phones is `DUPLICATE_MFA_ENROLLMENT_ID`; the same phone twice is
    /// de-duplicated.
    package static func forUpdate(_ entries: [AdminFactorInput], existing: [MFAFactor], now: Date, newID: () -> String) throws(AccountError)
        -> [MFAFactor]
    {
        var factors: [MFAFactor] = []
        for entry in entries {
            if let id = entry.enrollmentID, !MFAFactor.isValidEnrollmentID(id) {
                throw AccountError(.invalidMFAEnrollmentID, "mfaEnrollmentId must be 1 to 128 printable ASCII characters.")
            }
            let current = entry.enrollmentID.flatMap { id in existing.first { $0.enrollmentID == id } }
            if entry.totp || (entry.phoneInfo == nil && current?.kind == .totp) {
                guard var kept = current, kept.kind == .totp else { throw unsupportedTOTP }
                try entry.displayName.map(ProfileAttribute.checkDisplayName)
                if factors.contains(where: { $0.enrollmentID == kept.enrollmentID }) { throw duplicateID }
                if let name = entry.displayName { kept.displayName = name }
                if entry.enrolledAt != nil { (kept.enrolledAt, kept.enrolledAtText) = enrolled(entry, now: now) }
                factors.append(kept)
                continue
            }
            let number = try phone(entry)
            // The same phone twice: one factor (the first entry's).
            if factors.contains(where: { $0.phoneNumber == number }) { continue }
            let id = entry.enrollmentID ?? newID()
            if factors.contains(where: { $0.enrollmentID == id }) { throw duplicateID }
            // The same phone under the same id keeps when it was enrolled.
            var stamp: (Date, String?) = enrolled(entry, now: now)
            if entry.enrolledAt == nil, let kept = current, kept.phoneNumber == number { stamp = (kept.enrolledAt, kept.enrolledAtText) }
            factors.append(
                MFAFactor(
                    enrollmentID: id, kind: .phone, displayName: entry.displayName ?? current?.displayName, phoneNumber: number,
                    enrolledAt: stamp.0, enrolledAtText: stamp.1))
        }
        return try limited(factors)
    }

    /// An import's factors (§B.13): per-user refusals as their messages (nil: accepted).
    package static func forImport(_ entries: [AdminFactorInput], email: String?, emailVerified: Bool, now: Date, newID: () -> String)
        -> Result<[MFAFactor], AccountError>
    {
        guard !entries.isEmpty else { return .success([]) }
        guard email != nil else { return .failure(AccountError(.importFault, "Second factor account requires email to be presented.")) }
        guard emailVerified else { return .failure(AccountError(.importFault, "Second factor account requires email to be verified.")) }
        guard entries.count <= MFAFactor.maximumPerUser else { return .failure(AccountError(.importFault, "Too many second factors.")) }
        var factors: [MFAFactor] = []
        for entry in entries {
            if entry.totp { return .failure(AccountError(.importFault, "Importing TOTP MFA is not supported.")) }
            if let name = entry.displayName, (try? ProfileAttribute.checkDisplayName(name)) == nil {
                return .failure(AccountError(.importFault, "Second factor display name is invalid."))
            }
            guard entry.phoneInfo != nil else { return .failure(AccountError(.importFault, "Second factor not supported.")) }
            guard let number = try? PhoneNumber.normalise(entry.phoneInfo) else {
                return .failure(AccountError(.importFault, "Phone number format is invalid"))
            }
            let id = entry.enrollmentID ?? newID()
            guard MFAFactor.isValidEnrollmentID(id) else { return .failure(AccountError(.importFault, "Enrollment id is invalid.")) }
            if factors.contains(where: { $0.enrollmentID == id }) {
                return .failure(AccountError(.importFault, "Enrollment id already exists."))
            }
            if factors.contains(where: { $0.phoneNumber == number }) { continue }
            let (at, text) = enrolled(entry, now: now)
            factors.append(
                MFAFactor(
                    enrollmentID: id, kind: .phone, displayName: entry.displayName, phoneNumber: number, enrolledAt: at,
                    enrolledAtText: text))
        }
        return .success(factors)
    }

    private static func phone(_ entry: AdminFactorInput) throws(AccountError) -> String {
        try entry.displayName.map(ProfileAttribute.checkDisplayName)
        // Correction 5: a bad phone is `INVALID_PHONE_NUMBER : Invalid format.`
        guard let raw = entry.phoneInfo else { throw AccountError(.invalidPhoneNumber, "Invalid format.") }
        return try PhoneNumber.normalise(raw)
    }

    private static func limited(_ factors: [MFAFactor]) throws(AccountError) -> [MFAFactor] {
        guard factors.count <= MFAFactor.maximumPerUser else { throw AccountError(.secondFactorLimitExceeded) }
        return factors
    }

    static let unsupportedTOTP = AccountError(.unsupportedSecondFactor, "attempting to add a new TOTP enrollment")
    static let duplicateID = AccountError(.duplicateMFAEnrollmentID)
}
