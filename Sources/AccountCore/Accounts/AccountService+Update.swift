import Foundation

extension AccountService {
    /// What an update produced: the account and, when sessions were revoked for a client caller,
    /// the replacement session's tokens.
    package struct Updated: Sendable {
        package var user: UserRecord
        package var tokens: TokenBundle?
    }

    /// Client `accounts:lookup`.
    package func lookup(idToken: String?) async throws -> UserRecord {
        let caller = try await authenticate(idToken)
        guard let user = try await store.user(localID: caller.localID) else { throw AccountError(.userNotFound) }
        return user
    }

    /// Validated input of `accounts:update` (identity-toolkit.md §4.7 B step 3), before hashing.
    package struct UpdateInput: Sendable {
        package var email: String?
        package var password: String?
        package var displayName: String?
        package var photoURL: String?
        package var deleteAttributes: [String] = []
        package var deleteProviders: [String] = []
        package var validSince: Int64?
        package var emailVerified: Bool?
        package var disableUser: Bool?
        package var phoneNumber: String?
        package var customAttributes: String?
        package var createdAt: Int64?
        package var lastLoginAt: Int64?
        /// Admin only: a federated identity to attach (federation-and-limits.md §A.9 "Admin link").
        package var linkProvider: FederatedIdentity?
        /// Admin only: `mfa.enrollments`, the whole set of second factors (mfa-phone-tenants.md §B.13).
        package var mfaEnrollments: [AdminFactorInput]?

        /// Empty input.
        package init() {}
    }

    /// Client `accounts:update` with an `idToken` (identity-toolkit.md §4.7 B).
    package func update(idToken: String?, input: UpdateInput, client: Client) async throws -> Updated {
        let caller = try await authenticate(idToken)
        var change = try await makeChange(input)
        if case .set = change.email, settings.emailEnumerationProtection {
            throw AccountError(.operationNotAllowed, "Please verify the new email before changing email.")
        }
        guard let current = try await store.user(localID: caller.localID) else { throw AccountError(.userNotFound) }
        // "Multi-factor users must always have a verified email": they change it by verifyBeforeUpdateEmail (§B.12).
        if case .set(let email) = change.email, email != current.email, !current.factors.isEmpty {
            throw AccountError(.emailChangeNeedsVerification)
        }
        if change.password != nil || change.email != .keep { try await requireRecentLogin(caller, of: current) }
        if case .set(let email) = change.email, email == current.email { change.email = .keep }
        addRecoverNotice(to: &change, current: current)
        let revokes = change.password != nil || change.email != .keep || change.revokeAll
        var replacement = revokes ? newSession(provider: caller.signInProvider, method: caller.signInProvider, client: client) : nil
        // The caller's replacement keeps the second factor its session passed (§B.12).
        replacement?.secondFactor = caller.secondFactor
        let (user, ticket, _) = try await store.update(
            localID: caller.localID, guardSession: caller.sessionGuard, change: change, replacement: replacement, now: clock.now()
        )
        // A new password clears the account's password lockout (federation-and-limits.md §E.4 step 6).
        if change.password != nil { try await limiter.clearLockout(email: user.email) }
        guard let replacement, let ticket else { return Updated(user: user, tokens: nil) }
        return Updated(user: user, tokens: try await mint(user, replacement, ticket))
    }

    /// Admin `accounts:update` by `localId` (identity-toolkit.md §4.7 B, admin): no guard, no replacement.
    package func adminUpdate(localID: String?, input: UpdateInput) async throws -> UserRecord {
        guard let localID, !localID.isEmpty else { throw AccountError(.missingLocalID) }
        var change = try await makeChange(input)
        guard let current = try await store.user(localID: localID) else { throw AccountError(.userNotFound) }
        if case .set(let email) = change.email, email == current.email { change.email = .keep }
        if let entries = input.mfaEnrollments {
            change.factors = try AdminFactors.forUpdate(entries, existing: current.factors, now: clock.now()) {
                UUID().uuidString.lowercased()
            }
        }
        addRecoverNotice(to: &change, current: current)
        let (user, _, _) = try await store.update(localID: localID, guardSession: nil, change: change, replacement: nil, now: clock.now())
        if change.password != nil { try await limiter.clearLockout(email: user.email) }
        return user
    }

    /// Client `accounts:delete` (identity-toolkit.md §4.9).
    package func delete(idToken: String?) async throws {
        let caller = try await authenticate(idToken)
        try await requireRecentLogin(caller, of: try await store.user(localID: caller.localID))
        try await store.delete(localID: caller.localID, guardSession: caller.sessionGuard, now: clock.now())
    }

    /// Admin `accounts:delete`.
    package func adminDelete(localID: String?) async throws {
        guard let localID, !localID.isEmpty else { throw AccountError(.missingLocalID) }
        try await store.delete(localID: localID, guardSession: nil, now: clock.now())
    }

    /// Admin `accounts:revokeSessions` (identity-toolkit.md §4.18).
    package func revokeSessions(localID: String?, sessionIDs: [String]?) async throws -> (revoked: [String], validSince: Int64) {
        guard let localID, !localID.isEmpty else { throw AccountError(.missingLocalID) }
        if let sessionIDs, !(1...100).contains(sessionIDs.count) {
            throw AccountError(.sessionNotFound, "sessionIds must list 1 to 100 ids")
        }
        return try await store.revokeSessions(
            localID: localID, sessionIDs: sessionIDs, reason: sessionIDs == nil ? .allSessionsRevoked : .adminRevoked, now: clock.now()
        )
    }

    /// Admin `accounts:listSessions` (identity-toolkit.md §4.18).
    package func listSessions(localID: String?, includeRevoked: Bool, limit: Int, before: SessionCursor?) async throws -> [SessionRecord] {
        guard let localID, !localID.isEmpty else { throw AccountError(.missingLocalID) }
        guard try await store.user(localID: localID) != nil else { throw AccountError(.userNotFound) }
        return try await store.sessions(localID: localID, includeRevoked: includeRevoked, limit: limit, before: before)
    }

    /// An email change sends the previous address a way to undo it (identity-toolkit.md §4.7).
    func addRecoverNotice(to change: inout UserChange, current: UserRecord) {
        guard case .set(let email) = change.email, let old = current.email else { return }
        change.notices.append(
            .recoverNotice(
                settings: settings, random: random, now: clock.now(), localID: current.localID, currentEmail: email, oldEmail: old,
                lang: "en", apiKey: settings.linkAPIKey
            )
        )
    }

    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` when the caller's sign-in is older than the window. An
    /// anonymous account is exempt: its session is its only credential, so it could never sign in
    /// again, and adding an email or a password to it is how it is kept (the SDKs' "upgrade").
    /// `user` is read only when the sign-in is old, so a recent caller costs no extra query.
    func requireRecentLogin(_ caller: Authenticated, of user: @autoclosure () async throws -> UserRecord?) async throws {
        guard settings.recentLoginSeconds > 0,
            RevocationRules.seconds(clock.now()) - caller.authTime > settings.recentLoginSeconds
        else { return }
        if try await user()?.isAnonymous == true { return }
        throw AccountError(.credentialTooOldLoginAgain)
    }

    /// Step 3 (syntax) of §4.7 B, then hashing.
    func makeChange(_ input: UpdateInput) async throws -> UserChange {
        var change = UserChange()
        if let raw = input.email {
            guard let email = EmailAddress.normalize(raw) else { throw AccountError(.invalidEmail) }
            change.email = .set(email)
        }
        if let password = input.password { try settings.passwordPolicy.check(password) }
        if let claims = input.customAttributes { change.customAttributes = try Self.validateClaims(claims) }
        if let phone = input.phoneNumber {
            if phone.isEmpty {
                change.phoneNumber = .clear
            } else {
                change.phoneNumber = .set(try PhoneNumber.normalise(phone))
            }
        }
        if let validSince = input.validSince {
            guard validSince >= 0 else { throw AccountError(.unexpectedParameter, "validSince") }
            change.revokeAll = true
        }
        if let name = input.displayName {
            try ProfileAttribute.checkDisplayName(name)
            change.displayName = .set(name)
        }
        if let photo = input.photoURL {
            try ProfileAttribute.checkPhotoURL(photo)
            change.photoURL = .set(photo)
        }
        for attribute in input.deleteAttributes {
            switch attribute {
            case "DISPLAY_NAME": change.displayName = .clear
            case "PHOTO_URL": change.photoURL = .clear
            default:
                // What cannot be deleted this way (the email, the password, providers) is refused,
                // never answered with a silent success.
                throw AccountError(.invalidArgument, "deleteAttribute \(attribute.prefix(64)) cannot be deleted; use deleteProvider")
            }
        }
        change.deleteProviders = input.deleteProviders
        if let link = input.linkProvider { change.linkIdentity = try Self.checkAdminLink(link) }
        change.emailVerified = input.emailVerified
        change.disabled = input.disableUser
        change.createdAt = input.createdAt.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        change.lastLoginAt = input.lastLoginAt.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        if let password = input.password { change.password = try await hasher.hash(password) }
        return change
    }

    /// §A.9's admin link: a provider id of the form `[a-z0-9][a-z0-9._-]{0,126}` with a dot (none of
    /// the built-in sign-in methods), and a non-empty `rawId`.
    static func checkAdminLink(_ link: FederatedIdentity) throws(AccountError) -> FederatedIdentity {
        let id = link.providerID
        let allowed = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        let bytes = Array(id.utf8)
        guard (1...127).contains(bytes.count), bytes.allSatisfy(allowed), let first = bytes.first,
            first != UInt8(ascii: "."), first != UInt8(ascii: "_"), first != UInt8(ascii: "-"), id.contains("."),
            !["password", "phone", "anonymous", "custom", "firebase"].contains(id)
        else { throw AccountError(.invalidProviderID) }
        guard !link.rawID.isEmpty else { throw AccountError(.invalidProviderID, "rawId must be a non-empty string") }
        return link
    }

    /// identity-toolkit.md §2.5: a JSON object of at most 1000 bytes without reserved keys; `""`/`"{}"` clear.
    package static func validateClaims(_ raw: String) throws(AccountError) -> FieldChange<String> {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed == "{}" { return .clear }
        guard raw.utf8.count <= 1000 else { throw AccountError(.claimsTooLarge) }
        guard let value = try? JSONValue.parse(raw), let object = value.objectValue else {
            throw AccountError(.invalidClaims)
        }
        if let key = object.keys.sorted().first(where: IDTokenClaims.reserved.contains) {
            throw AccountError(.forbiddenClaim, key)
        }
        return object.isEmpty ? .clear : .set(raw)
    }
}
