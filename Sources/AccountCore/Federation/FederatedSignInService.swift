import Foundation

/// `accounts:signInWithIdp` (federation-and-limits.md §A): the credential an app holds (an IdP's
/// ID token), or a pending token, checked in §A.3's order; then the account resolved (§A.8) or the
/// identity linked (§A.9). The redirect flow (§A.5) arrives with `state` and is answered by its
/// own path.
package struct FederatedSignInService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    /// The signed-in user a link reads.
    package let users: any AccountStore
    package let configs: any IdPConfigStore
    package let store: any FederationStore
    package let verifier: any IdPSignatureVerifier
    package let endpoints: any IdPFlowEndpoints
    package let sha256: @Sendable ([UInt8]) -> [UInt8]
    /// HMAC-SHA256 under the flow key (derived from the key-encryption key): flows' nonces and PKCE verifiers.
    package let flowKey: @Sendable (String) -> [UInt8]
    /// §A.13: unsigned or bare-JSON IdP tokens accepted (`demo-` projects only).
    package let insecureTestMode: Bool

    /// Wires the service.
    package init(
        accounts: AccountService, environment: ServiceEnvironment, users: any AccountStore, configs: any IdPConfigStore,
        store: any FederationStore, verifier: any IdPSignatureVerifier,
        endpoints: any IdPFlowEndpoints, sha256: @escaping @Sendable ([UInt8]) -> [UInt8],
        flowKey: @escaping @Sendable (String) -> [UInt8], insecureTestMode: Bool = false
    ) {
        self.endpoints = endpoints
        self.flowKey = flowKey
        self.accounts = accounts
        self.environment = environment
        self.users = users
        self.configs = configs
        self.store = store
        self.verifier = verifier
        self.sha256 = sha256
        self.insecureTestMode = insecureTestMode
    }

    /// A request, as the wire carries it (§A.2).
    package struct Request: Sendable {
        package var requestURI: String?
        package var postBody: String?
        package var sessionID: String?
        package var pendingToken: String?
        /// Link to this signed-in user (§A.9).
        package var idToken: String?
        package var returnIdpCredential = false
        package var returnRefreshToken = false
        package var autoCreate = true
        package var client: AccountService.Client
        /// An admin's call: never hidden by email enumeration protection.
        package var isAdmin = false

        /// Creates a request.
        package init(client: AccountService.Client) { self.client = client }
    }

    /// What the response reports (§A.10).
    package struct Result: Sendable {
        package enum Outcome: Sendable {
            case signedIn(UserRecord, AccountService.TokenBundle, isNewUser: Bool, emailRecycled: Bool)
            /// The user must answer a second factor (mfa-phone-tenants.md §B.3): the success's
            /// fields without tokens, with the pending credential.
            case secondFactor(UserRecord, SecondFactorRequired)
            /// §A.8 row 3: the account with the email and the providers it is linked to, both
            /// withheld (nil, empty) when the answer hides accounts.
            case needConfirmation(localID: String?, verifiedProviders: [String])
            /// With `returnIdpCredential`: a refusal answered 200 with `errorMessage` (one of
            /// ``answeredAsErrorMessage``).
            case failed(AccountError.Code)
        }
        package var assertion: IdPAssertion
        package var pendingToken: String
        package var outcome: Outcome
        /// What the client sent, echoed.
        package var oauthIDToken: String?
        package var oauthAccessToken: String?
        /// Tokens accountd obtained itself (a code flow), returned only with `returnIdpCredential`.
        package var oauthExpiresIn: Int64?
        package var oauthRefreshToken: String?
        /// A redirect flow's `context`.
        package var context: String?
    }

    /// The provider ids A.1 knows but accountd does not verify yet: "not found".
    static let laterProviders: Set<String> = [
        "facebook.com", "github.com", "twitter.com", "microsoft.com", "yahoo.com", "linkedin.com", "playgames.google.com", "gc.apple.com",
    ]

    package func signIn(_ request: Request) async throws -> Result {
        guard let requestURI = request.requestURI, !requestURI.isEmpty else { throw AccountError(.missingRequestURI) }
        guard let components = URLComponents(string: requestURI), components.scheme?.isEmpty == false else {
            throw AccountError(.invalidRequestURI)
        }
        let (parameters, normalized) = Self.parameters(requestURI: components, postBody: request.postBody)
        let limiter = environment.limiter
        let address = request.client.ipAddress
        let (assertion, pendingToken, nonce, config, flow) = try await limiter.countingCredentialFailures(address: address) {
            try await credential(request, parameters: parameters, requestURI: components, normalized: normalized)
        }
        let trusted = FederationTrust.trusted(assertion, by: config, insecureTestMode: insecureTestMode)
        // A token replayed from a pending token is already kept; a new one is written with the
        // sign-in, in its transaction, or alone for an answer that signs nobody in.
        let isNewPending = request.pendingToken?.isEmpty ?? true
        let pending = isNewPending ? (hash: sha256(Array(pendingToken.utf8)), assertion: assertion) : nil
        var session = accounts.newSession(provider: assertion.providerID, method: assertion.providerID, client: request.client)
        session.signInAttributes = assertion.signInAttributes
        let use = {
            FederatedUse(
                assertion: assertion, trusted: trusted, session: session, usedNonce: nonce, usedFlow: flow?.stateHash, pending: pending,
                now: environment.clock.now())
        }
        var result = Result(
            // The outcome is decided below; a refusal until then.
            assertion: assertion, pendingToken: pendingToken, outcome: .failed(.invalidIDPResponse), oauthIDToken: parameters["id_token"],
            oauthAccessToken: parameters["access_token"], context: flow?.flow.context)
        if let tokens = flow?.tokens, !tokens.isEmpty {
            // Obtained by accountd from the IdP: only when asked for.
            result.oauthIDToken = request.returnIdpCredential ? tokens["id_token"]?.stringValue : nil
            result.oauthAccessToken = request.returnIdpCredential ? tokens["access_token"]?.stringValue : nil
            result.oauthExpiresIn = request.returnIdpCredential ? tokens["expires_in"]?.intValue : nil
            result.oauthRefreshToken =
                request.returnIdpCredential && request.returnRefreshToken ? tokens["refresh_token"]?.stringValue : nil
        }
        do {
            if let idToken = request.idToken {
                let caller = try await accounts.authenticate(idToken)
                // Decision 2: attaching an identity needs a recent sign-in, so a stolen refresh token
                // (whose ID tokens keep the session's old auth_time) cannot add one. An anonymous
                // account is exempt: linking is how it is kept (the SDKs' upgrade), as for email.
                try await accounts.requireRecentLogin(caller, of: try await users.user(localID: caller.localID))
                let (user, ticket) = try await store.linkFederated(
                    FederatedLink(use: use(), localID: caller.localID, guardSession: caller.sessionGuard))
                result.outcome = .signedIn(user, try await accounts.mint(user, session, ticket), isNewUser: false, emailRecycled: false)
                return result
            }
            // An account it creates counts against the client's address (§E.5), taken only when the
            // sign-in turns out to create one: a returning user's sign-in costs no extra statement.
            let newLocalID = LocalID.generate(environment.random)
            let challenge = try await accounts.gate?.draft()
            var outcome = try await store.signInFederated(
                FederatedSignIn(
                    use: use(), autoCreate: request.autoCreate, newLocalID: newLocalID, creationAdmitted: !limiter.settings.enabled,
                    challenge: challenge?.0))
            if case .creationNeedsAdmission = outcome {
                try await limiter.consume(.accountCreationsPerIP, address.map(AbuseLimiter.networkKey))
                outcome = try await store.signInFederated(
                    FederatedSignIn(
                        use: use(), autoCreate: request.autoCreate, newLocalID: newLocalID, creationAdmitted: true,
                        challenge: challenge?.0))
            }
            switch outcome {
            case .signedIn(let user, let ticket, let isNewUser, let recycled):
                result.outcome = .signedIn(
                    user, try await accounts.mint(user, session, ticket), isNewUser: isNewUser, emailRecycled: recycled)
            case .challenged(let user):
                guard let gate = accounts.gate, let challenge else { throw AccountError(.unavailable) }
                result.outcome = .secondFactor(user, try await gate.required(user, credential: challenge.credential))
            case .needConfirmation(let user):
                // Rolled back with everything else: kept on its own, for the link that follows.
                if isNewPending { try await savePending(pendingToken, assertion) }
                result.outcome =
                    environment.settings.hidesAccounts(fromAdmin: request.isAdmin)
                    ? .needConfirmation(localID: nil, verifiedProviders: [])
                    : .needConfirmation(localID: user.localID, verifiedProviders: user.federated.map(\.providerID))
            case .creationNeedsAdmission:
                // Only asked once, and the second ask admits: unreachable.
                throw AccountError(.unavailable, "The account is busy, retry shortly.")
            }
            return result
        } catch let error as AccountError where request.returnIdpCredential && Self.answeredAsErrorMessage.contains(error.code) {
            if isNewPending { try await savePending(pendingToken, assertion) }
            result.outcome = .failed(error.code)
            return result
        }
    }

    /// What a sign-in presents, verified (§A.3): a pending token kept from an earlier answer, the end
    /// of a redirect flow accountd started, or an IdP's ID token. With it, the pending token the
    /// answer carries, the nonce to spend, the provider's config and the flow to spend.
    private func credential(
        _ request: Request, parameters: [String: String], requestURI components: URLComponents, normalized: String
    ) async throws -> (
        assertion: IdPAssertion, pendingToken: String, nonce: (key: [UInt8], until: Date)?, config: IdPConfig?,
        flow: (stateHash: [UInt8], flow: IdPFlow, tokens: [String: JSONValue])?
    ) {
        if let pending = request.pendingToken, !pending.isEmpty {
            guard let assertion = try await store.pending(tokenHash: sha256(Array(pending.utf8)), now: environment.clock.now()) else {
                throw AccountError(.invalidPendingToken)
            }
            return (assertion, pending, nil, try await enabledConfig(assertion.providerID), nil)
        }
        if parameters["state"] != nil {
            let (assertion, stateHash, started, config, tokens) = try await completeFlow(
                parameters, requestURI: components, sessionID: request.sessionID)
            return (assertion, newPendingToken(), nil, config, (stateHash, started, tokens))
        }
        let invalidCredential = AccountError(
            .invalidCredentialOrProviderID, "Invalid IdP response/credential: \(normalized.prefix(2000))")
        guard let providerID = parameters["providerId"]?.lowercased(), !providerID.isEmpty else { throw invalidCredential }
        let config = try await enabledConfig(providerID)
        guard let raw = parameters["id_token"], !raw.isEmpty else { throw invalidCredential }
        let (assertion, nonce) = try await verify(raw, config: config, providerID: providerID, requestNonce: parameters["nonce"])
        return (assertion, newPendingToken(), nonce, config, nil)
    }

    /// The three refusals §A.10 answers 200 with `errorMessage` under `returnIdpCredential`.
    package static let answeredAsErrorMessage: Set<AccountError.Code> = [
        .providerAlreadyLinked, .federatedUserIDAlreadyLinked, .emailExists,
    ]

    /// §A.3 step 6: a provider accountd verifies, configured and enabled (in test mode, any A.1
    /// provider but SAML, a missing config counting as enabled).
    func enabledConfig(_ providerID: String) async throws -> IdPConfig? {
        let verifiable = providerID == "google.com" || providerID == "apple.com" || providerID.hasPrefix("oidc.")
        let known = verifiable || providerID.hasPrefix("saml.") || Self.laterProviders.contains(providerID)
        guard known else { throw AccountError(.invalidProviderID, "Provider Id is not supported.") }
        let config = verifiable ? try await configs.idpConfig(providerID) : nil
        if let config, !config.enabled {
            throw AccountError(.operationNotAllowed, "The identity provider configuration is disabled.")
        }
        if config == nil && !(insecureTestMode && !providerID.hasPrefix("saml.")) {
            throw AccountError(.operationNotAllowed, "The identity provider configuration is not found.")
        }
        return config
    }

    /// What `idpConfigs:testCredential` (§B.5 `accountctl idp test`) tells an operator of a token.
    package struct CredentialTest: Sendable {
        /// The token's payload.
        package var claims: [String: JSONValue]
        /// Whether A.7 lets this provider prove the email (the trusted-IdP rule would apply).
        package var trusted: Bool
        package var email: String?
        package var emailVerified: Bool
    }

    /// Runs §A.4 (and A.7's trust) on `idToken` as a sign-in through `providerID` would, enabled or
    /// not (an operator tests before enabling), and touches no account: nothing is recorded, a
    /// nonce included.
    package func testCredential(providerID: String, idToken: String?, nonce: String?) async throws -> CredentialTest {
        guard let idToken, !idToken.isEmpty else { throw AccountError(.invalidCredentialOrProviderID, "idToken is required.") }
        guard let config = try await configs.idpConfig(providerID.lowercased()) else { throw AccountError(.configurationNotFound) }
        let (assertion, _) = try await verify(idToken, config: config, providerID: config.providerID, requestNonce: nonce)
        return CredentialTest(
            claims: try IdPTokenRules.parse(idToken, allowBareJSON: insecureTestMode).payload,
            trusted: FederationTrust.trusted(assertion, by: config, insecureTestMode: insecureTestMode), email: assertion.email,
            emailVerified: assertion.emailVerified)
    }

    /// §A.4: the token verified row by row, its nonce checked (and, when it has one, not used
    /// before); returns the assertion and the nonce key to record in the sign-in.
    func verify(_ raw: String, config: IdPConfig?, providerID: String, requestNonce: String?) async throws -> (
        IdPAssertion, (key: [UInt8], until: Date)?
    ) {
        let now = environment.clock.now()
        if insecureTestMode {
            // §A.13: unsigned JWT or bare JSON, only the parse and the subject checked.
            let token = try IdPTokenRules.parse(raw, allowBareJSON: true)
            // The emulator's texts, so its own IdP test cases read what they expect.
            switch token.payload["sub"] {
            case nil, .null?, .bool(false)?, .string("")?:
                throw AccountError(
                    .invalidIDPResponse,
                    #"Invalid Idp Response: id_token missing required fields. ((Missing "sub" field. This field is required and must be a unique identifier.))"#
                )
            case .string?: break
            default: throw AccountError(.invalidIDPResponse, #"((The "sub" field must be a string.))"#)
            }
            return (IdPTokenRules.assertion(token.payload, providerID: providerID), nil)
        }
        guard let config else { throw AccountError(.operationNotAllowed, "The identity provider configuration is not found.") }
        let token = try IdPTokenRules.parse(raw)
        try IdPTokenRules.checkHeader(token)
        try await verifier.verifySignature(token, config: config)
        try IdPTokenRules.checkClaims(token, config: config, now: now)
        var used: (key: [UInt8], until: Date)?
        if let nonce = try IdPTokenRules.nonce(of: token.payload, requestNonce: requestNonce, providerID: providerID) {
            let issuer = token.payload["iss"]?.stringValue ?? ""
            let subject = token.payload["sub"]?.stringValue ?? ""
            let key = sha256(Array("\(issuer)\u{0}\(subject)\u{0}\(nonce)".utf8))
            if try await store.isNonceUsed(key, now: now) {
                throw AccountError(.missingOrInvalidNonce, "Duplicate credential received. Please try again with a new credential.")
            }
            if let requestNonce, !requestNonce.isEmpty {
                try IdPTokenRules.checkNonceHash(nonce, requestNonce: requestNonce) { Hex.encode(sha256(Array($0.utf8))) }
            }
            let expires = token.payload["exp"]?.intValue ?? Int64(now.timeIntervalSince1970) + 3600
            used = (key, Date(timeIntervalSince1970: TimeInterval(expires)))
        }
        return (IdPTokenRules.assertion(token.payload, providerID: providerID), used)
    }

    /// A new pending token (§A.6): 32 random bytes. It is kept, hashed, for an hour: written with
    /// a sign-in in its transaction, or alone for an answer without one (``savePending(_:_:)``).
    func newPendingToken() -> String { Base64URL.encode(environment.random.bytes(32)) }

    /// Keeps `assertion` behind `token` for an hour (§A.6).
    func savePending(_ token: String, _ assertion: IdPAssertion) async throws {
        let now = environment.clock.now()
        try await store.savePending(tokenHash: sha256(Array(token.utf8)), assertion: assertion, now: now, expiresAt: now + 3600)
    }

    /// §A.3's parameters (the request URI's query, then `postBody`'s pairs, then the URI's
    /// fragment, each overriding) and the normalised URI errors quote.
    static func parameters(requestURI: URLComponents, postBody: String?) -> ([String: String], String) {
        var parameters: [String: String] = [:]
        for item in requestURI.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        for (name, value) in FormEncoding.pairs((postBody ?? "")[...].utf8) { parameters[name] = value }
        for (name, value) in FormEncoding.pairs((requestURI.fragment ?? "")[...].utf8) { parameters[name] = value }
        var withoutFragment = requestURI
        withoutFragment.fragment = nil
        var normalized = withoutFragment.string ?? ""
        if let postBody, !postBody.isEmpty { normalized += (normalized.contains("?") ? "&" : "?") + postBody }
        return (parameters, normalized)
    }
}
