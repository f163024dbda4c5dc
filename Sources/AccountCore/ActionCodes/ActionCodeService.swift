import Foundation

/// Email actions (identity-toolkit.md §4.3, §4.4, §4.7 A, §4.8): sending codes with their links, applying
/// them, resetting passwords, and email-link sign-in with the unverified-account rule.
package struct ActionCodeService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    package let store: any ActionCodeStore
    /// The accounts codes are sent for.
    package let users: any AccountStore
    /// Hashes the new password of a reset.
    package let hasher: any PasswordHasher

    /// Wires the service.
    package init(
        accounts: AccountService, environment: ServiceEnvironment, store: any ActionCodeStore, users: any AccountStore,
        hasher: any PasswordHasher
    ) {
        self.accounts = accounts
        self.environment = environment
        self.store = store
        self.users = users
        self.hasher = hasher
    }

    package var settings: ProjectSettings { environment.settings }

    /// A code as stored, without spending it (the action page shows its form from this); nil
    /// when unknown.
    package func peek(code: String) async throws -> ActionCodeRecord? {
        try await store.code(code)
    }

    /// Whether `record` is a live, unspent code of one of `kinds` now.
    package func requireUsable(_ record: ActionCodeRecord, kinds: Set<ActionCodeKind>) throws(AccountError) {
        try record.requireUsable(kinds: kinds, now: environment.clock.now())
    }

    /// A `sendOobCode` request, parsed.
    package struct SendRequest: Sendable {
        package var requestType: String?
        package var email: String?
        package var newEmail: String?
        package var idToken: String?
        package var returnOobLink = false
        package var settings = ActionCodeSettings()
        package var isAdmin = false
        /// The API key the link carries.
        package var apiKey: String
        package var lang = "en"
        /// The client's address, for the abuse limits.
        package var ipAddress: String?

        /// Creates a request.
        package init(apiKey: String) { self.apiKey = apiKey }
    }

    /// What `sendOobCode` answers.
    package struct SendResult: Sendable, Equatable {
        /// The account's current address (the old one for a change).
        package var email: String
        /// For admins that asked for the link back.
        package var oobCode: String?
        package var oobLink: String?
    }

    /// `accounts:sendOobCode`, steps 1–8 of identity-toolkit.md §4.3 in order.
    package func send(_ request: SendRequest) async throws -> SendResult {
        guard let rawType = request.requestType, !rawType.isEmpty else { throw AccountError(.missingRequestType) }
        guard let kind = ActionCodeKind(requestType: rawType) else {
            throw AccountError(.invalidRequestType, "Unsupported request type")
        }
        if request.returnOobLink && !request.isAdmin { throw AccountError(.insufficientPermission) }
        if kind == .emailSignIn && !settings.emailLinkSignin { throw AccountError(.operationNotAllowed) }

        // Step 4: identity fields.
        var (email, newEmail) = try Self.identityFields(of: request, kind: kind)

        // Step 5: ActionCodeSettings.
        let domains = request.settings.continueURL == nil ? [] : try await environment.authorizedDomains()
        try request.settings.validate(kind: kind, project: settings, domains: domains)

        // Step 6: the ID token.
        var user: UserRecord?
        var session: SessionGuard?
        if let idToken = request.idToken, kind == .verifyEmail || kind == .verifyAndChangeEmail {
            let caller = try await accounts.authenticate(idToken)
            session = caller.sessionGuard
            user = try await users.user(localID: caller.localID)
            if kind == .verifyAndChangeEmail && !request.isAdmin { try await accounts.requireRecentLogin(caller, of: user) }
            guard user != nil else { throw AccountError(.userNotFound) }
        }

        // Abuse limits (federation-and-limits.md §E.5), before step 7 so that they count alike
        // whether or not the account exists: the recipient's spacing and count and the address's
        // count for clients. The project's daily quota counts only mail that is queued (decision
        // 12): made-up addresses must not use up every user's resets.
        let limiter = environment.limiter
        if let recipient = newEmail ?? email ?? user?.email, !request.isAdmin {
            try await limiter.consumeClientMail(kind.emailKind, recipient: recipient, address: request.ipAddress)
        }

        // Step 7: account state; protection hides existence from clients, and a hidden refusal
        // answers the quota as a queued mail would.
        let hide = settings.hidesAccounts(fromAdmin: request.isAdmin)
        func hidden(_ email: String) async throws -> SendResult {
            try await limiter.peekMailQuota(kind.emailKind, project: settings.projectID)
            return SendResult(email: email)
        }
        switch kind {
        case .passwordReset:
            let found = try await users.user(email: email!)
            guard let found, !found.disabled else {
                if hide { return try await hidden(email!) }
                throw AccountError(found == nil ? .emailNotFound : .userDisabled)
            }
            user = found
        case .verifyEmail, .verifyAndChangeEmail:
            if user == nil {
                user = try await users.user(email: email!)
                guard user != nil else { throw AccountError(.userNotFound) }
            }
            guard let address = user!.email else { throw AccountError(.missingEmail) }
            email = address
            if kind == .verifyEmail, user!.disabled { throw AccountError(.userDisabled) }
            if let newEmail, let owner = try await users.user(email: newEmail), owner.localID != user!.localID {
                if hide { return try await hidden(address) }
                throw AccountError(.emailExists)
            }
        case .emailSignIn:
            user = try await users.user(email: email!)
            // A disabled account's link could never complete; refuse it as a reset is refused.
            if let found = user, found.disabled {
                if hide { return try await hidden(email!) }
                throw AccountError(.userDisabled)
            }
        case .recoverEmail, .revertSecondFactorAddition:
            break
        }

        // Step 8: the code, and its email in the same transaction; the email counts in the
        // project's quota now that it will be queued.
        if !request.returnOobLink { try await limiter.consumeMailQuota(kind.emailKind, project: settings.projectID) }
        return try await issue(request, kind: kind, email: email!, newEmail: newEmail, user: user, session: session)
    }

    /// Step 4 of §4.3: the address the code is for and, for a change, the new one.
    private static func identityFields(of request: SendRequest, kind: ActionCodeKind) throws -> (email: String?, newEmail: String?) {
        switch kind {
        case .passwordReset, .emailSignIn:
            return (try AccountService.requireEmail(request.email), nil)
        case .verifyEmail, .verifyAndChangeEmail:
            var newEmail: String?
            if kind == .verifyAndChangeEmail {
                guard let raw = request.newEmail, !raw.isEmpty else { throw AccountError(.missingNewEmail) }
                guard let normalized = EmailAddress.normalize(raw) else { throw AccountError(.invalidNewEmail) }
                newEmail = normalized
            }
            if request.isAdmin && request.idToken == nil {
                return (try AccountService.requireEmail(request.email), newEmail)
            } else if request.idToken == nil {
                throw AccountError(.missingIDToken)
            }
            return (nil, newEmail)
        case .recoverEmail, .revertSecondFactorAddition:
            throw AccountError(.invalidRequestType, "Unsupported request type")
        }
    }

    /// Step 8 of §4.3: the code and its email, written together under the user's lock, only if
    /// what they were decided on still holds.
    private func issue(
        _ request: SendRequest, kind: ActionCodeKind, email: String, newEmail: String?, user: UserRecord?, session: SessionGuard?
    ) async throws -> SendResult {
        let code = NewActionCode(
            random: environment.random, kind: kind, localID: user?.localID, email: email, newEmail: newEmail,
            settingsJSON: request.settings.json, lang: request.lang, now: environment.clock.now(), lifetimes: settings.codeLifetimes
        )
        let link = request.settings.link(kind: kind, code: code.code, apiKey: request.apiKey, lang: request.lang, project: settings)
        let message =
            request.returnOobLink
            ? nil
            : EmailTemplates.message(
                kind: kind.emailKind, to: newEmail ?? email, link: link, lang: request.lang, productName: settings.productName,
                newEmail: newEmail
            )
        let precondition = user.map {
            IssuePrecondition(localID: $0.localID, session: session, credentialVersion: $0.credentialVersion, email: email)
        }
        try await store.store(OutgoingCode(code: code, email: message), precondition: precondition)
        return SendResult(email: email, oobCode: request.returnOobLink ? code.code : nil, oobLink: request.returnOobLink ? link : nil)
    }

    /// A recover code for a user whose email moved away from `oldEmail`, with its notice.
    func recoverNotice(localID: String, currentEmail: String, oldEmail: String, lang: String, apiKey: String) -> OutgoingCode {
        OutgoingCode.recoverNotice(
            settings: settings, random: environment.random, now: environment.clock.now(), localID: localID, currentEmail: currentEmail,
            oldEmail: oldEmail, lang: lang, apiKey: apiKey
        )
    }

    /// `accounts:update` with `oobCode` (identity-toolkit.md §4.7 A).
    package func apply(code: String, apiKey: String, address: String? = nil) async throws -> UserRecord {
        try await environment.limiter.countingCodeFailures(address: address) { try await applyCode(code, apiKey: apiKey) }
    }

    private func applyCode(_ code: String, apiKey: String) async throws -> UserRecord {
        guard let record = try await store.code(code) else { throw AccountError(.invalidOOBCode) }
        try record.requireUsable(
            kinds: [.verifyEmail, .verifyAndChangeEmail, .recoverEmail, .revertSecondFactorAddition], now: environment.clock.now())
        var recover: OutgoingCode?
        if record.kind == .verifyAndChangeEmail, let localID = record.localID, let newEmail = record.newEmail {
            recover = recoverNotice(localID: localID, currentEmail: newEmail, oldEmail: record.email, lang: record.lang, apiKey: apiKey)
        }
        let user = try await store.apply(code, recover: recover, now: environment.clock.now())
        return user
    }

    /// `accounts:resetPassword` (identity-toolkit.md §4.8): check only without `newPassword`. A
    /// reset clears the account's password lockout (federation-and-limits.md §E.4 step 6).
    package func resetPassword(code: String?, newPassword: String?, address: String? = nil) async throws -> (ActionCodeRecord, UserRecord?)
    {
        let (record, user) = try await environment.limiter.countingCodeFailures(address: address) {
            try await checkOrReset(code: code, newPassword: newPassword)
        }
        if let user { try await environment.limiter.clearLockout(email: user.email) }
        return (record, user)
    }

    private func checkOrReset(code: String?, newPassword: String?) async throws -> (ActionCodeRecord, UserRecord?) {
        guard let code, !code.isEmpty else { throw AccountError(.missingOOBCode) }
        guard let record = try await store.code(code) else { throw AccountError(.invalidOOBCode) }
        guard record.usedAt == nil else { throw AccountError(.invalidOOBCode) }
        guard record.expiresAt > environment.clock.now() else { throw AccountError(.expiredOOBCode) }
        guard let newPassword else {
            var record = record
            if let localID = record.localID, let user = try await users.user(localID: localID) {
                if user.disabled { throw AccountError(.userDisabled) }
                // A revert code names its factor (§B.12), and is dead once the factor is gone.
                if record.kind == .revertSecondFactorAddition {
                    guard let factor = user.factors.first(where: { $0.enrollmentID == record.enrollmentID }) else {
                        throw AccountError(.invalidOOBCode)
                    }
                    record.factor = factor
                }
            }
            return (record, nil)
        }
        guard settings.allowPasswordSignup else { throw AccountError(.passwordLoginDisabled) }
        guard record.kind == .passwordReset else { throw AccountError(.invalidOOBCode) }
        try settings.passwordPolicy.check(newPassword)
        let hashed = try await hasher.hash(newPassword)
        let user = try await store.resetPassword(code, password: hashed, now: environment.clock.now())
        return (record, user)
    }

    /// `accounts:signInWithEmailLink` (identity-toolkit.md §4.4). A wrong or expired code counts
    /// against the address; an account it creates counts as one created from it.
    package func signInWithEmailLink(
        email rawEmail: String?, code: String?, idToken: String?, client: AccountService.Client, apiKey: String
    ) async throws -> AccountService.SignedIn {
        let network = client.ipAddress.map(AbuseLimiter.networkKey)
        try await environment.limiter.peek(.accountCreationsPerIP, network)
        let signedIn = try await environment.limiter.countingCodeFailures(address: client.ipAddress) {
            try await completeEmailLink(email: rawEmail, code: code, idToken: idToken, client: client, apiKey: apiKey)
        }
        if signedIn.isNewUser { try await environment.limiter.record(.accountCreationsPerIP, network) }
        return signedIn
    }

    private func completeEmailLink(
        email rawEmail: String?, code: String?, idToken: String?, client: AccountService.Client, apiKey: String
    ) async throws -> AccountService.SignedIn {
        guard settings.emailLinkSignin else { throw AccountError(.operationNotAllowed) }
        let email = try AccountService.requireEmail(rawEmail)
        guard let code, !code.isEmpty else { throw AccountError(.missingOOBCode) }
        var linkTo: (localID: String, guardSession: SessionGuard)?
        var recover: OutgoingCode?
        let provider = "password"  // email-link sessions sign in with the password provider (§3.1)
        // The store checks the code as it spends it, in the completion's transaction. A link reads
        // it first as well: the code is judged before the caller's token, and its language is the
        // recovery notice's.
        if let idToken, !idToken.isEmpty {
            guard let record = try await store.code(code) else { throw AccountError(.invalidOOBCode) }
            try record.requireUsable(kinds: [.emailSignIn], now: environment.clock.now())
            guard record.email == email else {
                throw AccountError(.invalidEmail, "The email provided does not match the sign-in email address.")
            }
            let caller = try await accounts.authenticate(idToken)
            let current = try await users.user(localID: caller.localID)
            // Linking changes the account's identity: it needs a recent sign-in, as an email or
            // password change does; an old session or a stolen refresh token is not enough.
            try await accounts.requireRecentLogin(caller, of: current)
            linkTo = (caller.localID, caller.sessionGuard)
            if let current, let old = current.email, old != email {
                recover = recoverNotice(localID: caller.localID, currentEmail: email, oldEmail: old, lang: record.lang, apiKey: apiKey)
            }
        }
        // A challenged user gets a pending credential instead of tokens (§B.3); a link is made by a
        // session that already passed its factors.
        let challenge = linkTo == nil ? try await accounts.gate?.draft() : nil
        // Two first-time completions for one new email: the unique index decides, the loser runs
        // again as a sign-in of the now existing account.
        for attempt in 0..<2 {
            let session = accounts.newSession(provider: provider, method: "emailLink", client: client)
            do {
                let (user, ticket, isNewUser) = try await store.completeEmailLink(
                    EmailLinkCompletion(
                        code: code, email: email, newLocalID: LocalID.generate(environment.random), linkTo: linkTo, session: session,
                        recover: recover, challenge: challenge?.0, now: environment.clock.now()
                    )
                )
                guard let ticket else {
                    var required = try await accounts.gate!.required(user, credential: challenge!.credential)
                    required.fields = ["kind": .string("identitytoolkit#EmailLinkSigninResponse")]
                    throw required
                }
                return AccountService.SignedIn(user: user, tokens: try await accounts.mint(user, session, ticket), isNewUser: isNewUser)
            } catch let error as AccountError where error.code == .emailExists && linkTo == nil && attempt == 0 {
                continue
            }
        }
        throw AccountError(.unavailable)
    }
}
