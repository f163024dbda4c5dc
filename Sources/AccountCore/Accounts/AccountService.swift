import Foundation

/// The use cases of accounts and sessions, independent of HTTP and SQL: validation order of the
/// reference, hashing off the event loops, one store transaction per change, tokens minted after.
package struct AccountService: Sendable {
    /// The settings, clock, random source and limiter every service shares.
    package let environment: ServiceEnvironment
    package let store: any AccountStore
    package let hasher: any PasswordHasher
    package let signer: any TokenSigner
    package let refreshCodec: any RefreshTokenCodec
    package let cache: RevocationCache
    /// Challenges users with second factors at sign-in (mfa-phone-tenants.md §B.3); nil: no MFA.
    package let gate: SecondFactorGate?

    package var settings: ProjectSettings { environment.settings }
    package var clock: any WallClock { environment.clock }
    package var random: any RandomSource { environment.random }
    /// The abuse limits (federation-and-limits.md §E); off unless the composition passes one.
    package var limiter: AbuseLimiter { environment.limiter }

    /// Wires the service.
    package init(
        environment: ServiceEnvironment, store: any AccountStore, hasher: any PasswordHasher, signer: any TokenSigner,
        refreshCodec: any RefreshTokenCodec, cache: RevocationCache, gate: SecondFactorGate? = nil
    ) {
        self.gate = gate
        self.environment = environment
        self.store = store
        self.hasher = hasher
        self.signer = signer
        self.refreshCodec = refreshCodec
        self.cache = cache
    }

    /// Wires the service with an environment of these parts.
    package init(
        settings: ProjectSettings, store: any AccountStore, hasher: any PasswordHasher, signer: any TokenSigner,
        refreshCodec: any RefreshTokenCodec, cache: RevocationCache, clock: any WallClock = SystemClock(),
        random: any RandomSource = SystemRandom(), limiter: AbuseLimiter? = nil
    ) {
        self.init(
            environment: ServiceEnvironment(settings: settings, clock: clock, random: random, limiter: limiter), store: store,
            hasher: hasher, signer: signer, refreshCodec: refreshCodec, cache: cache)
    }

    /// The admin's lookup by identifiers (`accounts:lookup` with `localId`, `email`, `phoneNumber`):
    /// each user once, in the order found.
    package func users(
        localIDs: [String], emails: [String], phoneNumbers: [String], federatedIDs: [(providerID: String, rawID: String)] = []
    ) async throws -> [UserRecord] {
        let phoneNumbers = try phoneNumbers.map { raw throws(AccountError) in try PhoneNumber.normalise(raw) }
        var users = try await store.users(localIDs: localIDs, emails: emails, phoneNumbers: phoneNumbers)
        for user in try await store.users(federatedIDs: federatedIDs) where !users.contains(where: { $0.localID == user.localID }) {
            users.append(user)
        }
        return users
    }

    /// A fresh opaque identifier (`createAuthUri`'s `sessionId`): `count` characters of `alphabet`.
    package func randomIdentifier(count: Int, alphabet: [Character]) -> String {
        random.string(count: count, alphabet: alphabet)
    }

    /// Where a request came from, recorded on sessions.
    package struct Client: Sendable {
        package var userAgent: String?
        package var ipAddress: String?

        /// Creates client info.
        package init(userAgent: String?, ipAddress: String?) {
            self.userAgent = userAgent
            self.ipAddress = ipAddress
        }
    }

    /// An ID token and the refresh token to keep.
    package struct TokenBundle: Sendable, Equatable {
        package var idToken: String
        package var refreshToken: String
    }

    /// A signed-in outcome: the account after the change and its new tokens.
    package struct SignedIn: Sendable {
        package var user: UserRecord
        package var tokens: TokenBundle
        package var isNewUser: Bool
    }

    func newSession(provider: String, method: String, client: Client) -> NewSession {
        NewSession(
            random: random, keyID: refreshCodec.currentKeyID, provider: provider, method: method,
            userAgent: client.userAgent, ipAddress: client.ipAddress
        )
    }

    // MARK: Sign-up and sign-in

    /// Client `accounts:signUp` (identity-toolkit.md §4.1), without `idToken` (that is an update).
    package func signUp(email rawEmail: String?, password: String?, displayName: String?, client: Client) async throws -> SignedIn {
        if rawEmail == nil && password == nil {
            guard settings.allowAnonymous else { throw AccountError(.adminOnlyOperation) }
            try await limiter.consume(.accountCreationsPerIP, client.ipAddress.map(AbuseLimiter.networkKey))
            let now = clock.now()
            let user = UserRecord.anonymousSignUp(localID: LocalID.generate(random), now: now)
            let session = newSession(provider: "anonymous", method: "anonymous", client: client)
            let (created, ticket) = try await store.createUser(user, session: session, now: now)
            return SignedIn(user: created, tokens: try await mint(created, session, ticket!), isNewUser: true)
        }
        guard settings.allowPasswordSignup else { throw AccountError(.operationNotAllowed) }
        let email = try Self.requireEmail(rawEmail)
        guard let password else { throw AccountError(.missingPassword) }
        try settings.passwordPolicy.check(password)
        try displayName.map(ProfileAttribute.checkDisplayName)
        try await limiter.consume(.accountCreationsPerIP, client.ipAddress.map(AbuseLimiter.networkKey))
        let now = clock.now()
        let user = UserRecord.passwordSignUp(
            localID: LocalID.generate(random), email: email, password: try await hasher.hash(password), displayName: displayName, now: now)
        let session = newSession(provider: "password", method: "password", client: client)
        let (created, ticket) = try await store.createUser(user, session: session, now: now)
        return SignedIn(user: created, tokens: try await mint(created, session, ticket!), isNewUser: true)
    }

    /// Admin create (identity-toolkit.md §4.1, admin): no session, no tokens.
    package func adminCreate(
        localID: String?, email rawEmail: String?, password: String?, phoneNumber: String?, displayName: String?,
        photoURL: String?, emailVerified: Bool, disabled: Bool, factors: [AdminFactorInput] = []
    ) async throws -> UserRecord {
        if let localID, !LocalID.isValid(localID) { throw AccountError(.invalidLocalID) }
        let email = try rawEmail.map { raw throws(AccountError) in
            guard let email = EmailAddress.normalize(raw) else { throw AccountError(.invalidEmail) }
            return email
        }
        if let password { try settings.passwordPolicy.check(password) }
        try displayName.map(ProfileAttribute.checkDisplayName)
        try photoURL.map(ProfileAttribute.checkPhotoURL)
        let phoneNumber = try phoneNumber.map { raw throws(AccountError) in try PhoneNumber.normalise(raw) }
        let now = clock.now()
        let factors = try AdminFactors.forCreate(factors, now: now) { UUID().uuidString.lowercased() }
        var user = UserRecord.adminCreated(
            localID: localID ?? LocalID.generate(random), email: email, emailVerified: emailVerified,
            password: try await password.asyncMap { try await hasher.hash($0) }, phoneNumber: phoneNumber, displayName: displayName,
            photoURL: photoURL, disabled: disabled, now: now)
        user.factors = factors
        return try await store.createUser(user, session: nil, now: now).0
    }

    /// `accounts:signInWithPassword` (identity-toolkit.md §4.2).
    package func signInWithPassword(email rawEmail: String?, password: String?, client: Client) async throws -> SignedIn {
        guard settings.allowPasswordSignup else { throw AccountError(.passwordLoginDisabled) }
        let email = try Self.requireEmail(rawEmail)
        guard let password, !password.isEmpty else { throw AccountError(.missingPassword) }
        let protection = settings.emailEnumerationProtection
        // Abuse limits (federation-and-limits.md §E.4): the address's failures and the account's
        // lock for this network, before any hashing; a failure counts, a success clears its class.
        let check = try await limiter.beforePasswordCheck(email: email, address: client.ipAddress)
        func failed(_ error: AccountError) async throws -> AccountError {
            try await limiter.passwordFailed(email: email, network: check.network, address: client.ipAddress)
            return error
        }
        guard let user = try await store.user(email: email) else {
            _ = try await hasher.dummyVerify(password)
            throw try await failed(AccountError(protection ? .invalidLoginCredentials : .emailNotFound))
        }
        let wrongPassword = AccountError(protection ? .invalidLoginCredentials : .invalidPassword)
        guard let credential = user.password else {
            _ = try await hasher.dummyVerify(password)
            throw try await failed(wrongPassword)
        }
        let lane: HashLane = check.network == .known ? .known : .standard
        guard try await hasher.verify(password, against: credential.stored, lane: lane) else { throw try await failed(wrongPassword) }
        if user.disabled { throw AccountError(.userDisabled) }
        try await limiter.passwordSucceeded(email: email, after: check)
        // An imported hash, or one of weaker (other) parameters, is replaced now that the password is known.
        let upgrade = hasher.needsRehash(credential.stored) ? try await hasher.hash(password) : nil
        let session = newSession(provider: "password", method: "password", client: client)
        do {
            if var required = try await gate?.challenge(user, session: session, upgradedPassword: upgrade) {
                required.fields = [
                    "kind": .string("identitytoolkit#VerifyPasswordResponse"), "displayName": .string(user.displayName ?? ""),
                    "registered": .bool(true),
                ]
                throw required
            }
            let (signedIn, ticket) = try await store.startSession(
                for: user, upgradedPassword: upgrade, session: session, now: clock.now()
            )
            return SignedIn(user: signedIn, tokens: try await mint(signedIn, session, ticket), isNewUser: false)
        } catch let error as AccountError where error.code == .invalidPassword || error.code == .userNotFound {
            throw wrongPassword
        }
    }

    /// What `accounts:createAuthUri` reports of an identifier (identity-toolkit.md §4.5): nothing
    /// when the answer hides accounts (every field nil), else whether it is registered and how it
    /// signs in.
    package struct Discovery: Sendable, Equatable {
        package var registered: Bool?
        package var allProviders: [String]?
        package var signinMethods: [String]?

        /// What a caller is told of `user` (nil: no account), or nothing when `hidden`.
        package init(_ user: UserRecord?, hidden: Bool) {
            guard !hidden else { return }
            registered = user != nil
            allProviders = user?.allProviders ?? []
            signinMethods = user?.signinMethods ?? []
        }
    }

    /// `accounts:createAuthUri` (identity-toolkit.md §4.5): what the caller may learn of the
    /// account for an identifier. A client's lookups count against its address
    /// (federation-and-limits.md §E.5), hidden answers included.
    package func discover(identifier: String?, continueURI: String?, address: String? = nil, isAdmin: Bool) async throws -> Discovery {
        guard let identifier, !identifier.isEmpty else { throw AccountError(.missingIdentifier) }
        guard let continueURI, !continueURI.isEmpty else { throw AccountError(.missingContinueURI) }
        guard let email = EmailAddress.normalize(identifier) else { throw AccountError(.invalidIdentifier) }
        guard let url = URL(string: continueURI), url.scheme != nil else { throw AccountError(.invalidContinueURI) }
        try await limiter.consume(.lookupsPerIP, address.map(AbuseLimiter.networkKey))
        // Hidden: nothing is looked up, so neither the answer nor its time says whether one exists.
        if settings.hidesAccounts(fromAdmin: isAdmin) { return Discovery(nil, hidden: true) }
        // The account with that email, else the first with a federated identity of that email
        // (federation-and-limits.md §A.11).
        var user = try await store.user(email: email)
        if user == nil { user = try await store.userWithFederatedEmail(email) }
        return Discovery(user, hidden: false)
    }

    // MARK: Helpers

    /// `MISSING_EMAIL` / `INVALID_EMAIL`, or the normalised address.
    package static func requireEmail(_ raw: String?) throws(AccountError) -> String {
        guard let raw else { throw AccountError(.missingEmail) }
        guard let email = EmailAddress.normalize(raw) else { throw AccountError(.invalidEmail) }
        return email
    }
}
