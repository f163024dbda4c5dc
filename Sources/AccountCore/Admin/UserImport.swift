import Foundation

/// One user of an `accounts:batchCreate` request (identity-toolkit.md §4.11), parsed.
package struct ImportedUser: Sendable {
    package var localID: String?
    package var email: String?
    package var emailVerified = false
    package var displayName: String?
    package var photoURL: String?
    package var phoneNumber: String?
    package var disabled = false
    package var customAttributes: String?
    package var createdAt: Int64?
    package var lastLoginAt: Int64?
    package var passwordHash: [UInt8]?
    package var salt: [UInt8]?
    package var rawPassword: String?
    package var providers: [FederatedIdentity] = []
    /// `mfaInfo` (mfa-phone-tenants.md §B.13).
    package var factors: [AdminFactorInput] = []
    /// A field the wire form could not decode (`passwordHash` that is not base64): the record is
    /// refused with this message instead of being imported without it.
    package var fault: String?

    /// An empty user.
    package init() {}
}

/// The request-level part of an import.
package struct ImportRequest: Sendable {
    package var users: [ImportedUser] = []
    package var hashAlgorithm: String?
    /// The algorithm's parameters as strings (`signerKey`, `saltSeparator`, `rounds`, …).
    package var hashParameters: [String: String] = [:]
    package var allowOverwrite = true
    package var sanityCheck = false

    /// An empty request.
    package init() {}
}

extension AdminService {
    /// `accounts:batchCreate` (identity-toolkit.md §4.11): request-level faults throw; per-user faults are
    /// returned as `(index, message)`.
    package func importUsers(_ request: ImportRequest, store importer: any UserImportStore) async throws -> [(index: Int, message: String)]
    {
        guard !request.users.isEmpty else { throw AccountError(.importFault, "MISSING_USER_ACCOUNT") }
        guard request.users.count <= 1000 else { throw AccountError(.importFault, "MAXIMUM_USER_COUNT_EXCEEDED") }
        let needsHash = request.users.contains { $0.passwordHash != nil }
        if needsHash {
            guard let algorithm = request.hashAlgorithm, !algorithm.isEmpty else {
                throw AccountError(.importFault, "MISSING_HASH_ALGORITHM")
            }
            try hasher.validateImport(algorithm: algorithm, parameters: request.hashParameters)
        }
        if request.sanityCheck {
            var emails = Set<String>()
            var ids = Set<String>()
            var raws = Set<String>()
            for user in request.users {
                if let id = user.localID, !ids.insert(id).inserted { throw AccountError(.importFault, "DUPLICATE_LOCAL_ID : \(id)") }
                if let email = user.email?.lowercased(), !emails.insert(email).inserted {
                    throw AccountError(.importFault, "DUPLICATE_EMAIL : \(email)")
                }
                for link in user.providers where !raws.insert("\(link.providerID) \(link.rawID)").inserted {
                    throw AccountError(.importFault, "DUPLICATE_RAW_ID : Provider id(\(link.providerID)), Raw id(\(link.rawID))")
                }
            }
        }
        let now = environment.clock.now()
        var errors: [(Int, String)] = []
        var records: [(index: Int, user: UserRecord)] = []
        for (index, imported) in request.users.enumerated() {
            do {
                records.append((index, try await record(for: imported, request: request, now: now)))
            } catch let error as AccountError {
                errors.append((index, error.detail ?? error.code.rawValue))
            }
        }
        let stored = try await importer.importUsers(records, allowOverwrite: request.allowOverwrite, now: now)
        errors += stored.map { ($0.key, $0.value) }
        return errors.sorted { $0.0 < $1.0 }
    }

    private func record(for imported: ImportedUser, request: ImportRequest, now: Date) async throws -> UserRecord {
        if let fault = imported.fault { throw AccountError(.invalidArgument, fault) }
        guard let localID = imported.localID, LocalID.isValid(localID) else {
            throw AccountError(.invalidLocalID, "localId is missing or invalid")
        }
        var user = UserRecord.blank(localID: localID, now: now)
        if let raw = imported.email {
            guard let email = EmailAddress.normalize(raw) else { throw AccountError(.invalidEmail, "email is invalid") }
            user.email = email
        }
        if let phone = imported.phoneNumber {
            guard let phone = try? PhoneNumber.normalise(phone) else {
                throw AccountError(.invalidPhoneNumber, "Phone number format is invalid")
            }
            user.phoneNumber = phone
        }
        if let claims = imported.customAttributes {
            do {
                if case .set(let value) = try AccountService.validateClaims(claims) { user.customAttributes = value }
            } catch {
                throw AccountError(error.code, "custom claims are invalid: \(error.code.rawValue)")
            }
        }
        try imported.displayName.map(ProfileAttribute.checkDisplayName)
        try imported.photoURL.map(ProfileAttribute.checkPhotoURL)
        user.emailVerified = imported.emailVerified
        user.displayName = imported.displayName
        user.photoURL = imported.photoURL
        user.disabled = imported.disabled
        if let createdAt = imported.createdAt { user.createdAt = Date(timeIntervalSince1970: Double(createdAt) / 1000) }
        if let lastLoginAt = imported.lastLoginAt { user.lastLoginAt = Date(timeIntervalSince1970: Double(lastLoginAt) / 1000) }
        if let hash = imported.passwordHash, let algorithm = request.hashAlgorithm {
            let stored = StoredPassword(algorithm: algorithm, hash: hash, salt: imported.salt, parameters: request.hashParameters)
            if let fault = hasher.importFault(stored) { throw AccountError(.invalidArgument, fault) }
            user.password = PasswordCredential(stored: stored, updatedAt: now)
        } else if let raw = imported.rawPassword {
            try environment.settings.passwordPolicy.check(raw)
            user.password = PasswordCredential(stored: try await hasher.hash(raw), updatedAt: now)
        }
        user.federated = imported.providers.filter { $0.providerID != "password" && $0.providerID != "phone" }
        user.factors = try AdminFactors.forImport(
            imported.factors, email: user.email, emailVerified: user.emailVerified, now: now, newID: { UUID().uuidString.lowercased() }
        ).get()
        return user
    }
}
