import Foundation

extension FederatedSignInService {
    /// `createAuthUri` with a `providerId` (§A.5): the IdP's authorization URL for a new flow.
    package struct AuthURIRequest: Sendable {
        package var providerID: String
        package var continueURI: String?
        package var sessionID: String?
        package var context: String?
        package var customParameters: [String: String] = [:]
        package var oauthScope: String?
        package var hostedDomain: String?
        package var authFlowType: String?
        package var identifier: String?
        /// The client's address: flows count against it (decision 17); nil for an admin.
        package var address: String?

        /// Creates a request.
        package init(providerID: String) { self.providerID = providerID }
    }

    /// The parameters a flow may not be given by `customParameter` (dropped silently).
    static let reservedParameters: Set<String> = [
        "client_id", "response_type", "scope", "redirect_uri", "state", "nonce", "code_challenge", "code_challenge_method",
    ]

    /// Checks what a redirect flow stores or echoes against decision 17's bounds, before anything
    /// else: `sessionId`, `context`, `continueUri`, `oauthScope`, `hostedDomain` and the
    /// `customParameter` entries.
    static func checkBounds(_ request: AuthURIRequest, sessionID: String) throws(AccountError) {
        try FieldLimits.check(sessionID, "sessionId", FieldLimits.sessionID)
        try FieldLimits.check(request.context, "context", FieldLimits.context)
        if let uri = request.continueURI, uri.utf8.count > FieldLimits.continueURI { throw AccountError(.invalidContinueURI) }
        try FieldLimits.check(request.oauthScope, "oauthScope", FieldLimits.oauthScope)
        try FieldLimits.check(request.hostedDomain, "hostedDomain", FieldLimits.appField)
        try FieldLimits.check(request.authFlowType, "authFlowType", FieldLimits.customParameter)
        try FieldLimits.check(request.identifier, "identifier", FieldLimits.customParameter)
        guard request.customParameters.count <= FieldLimits.customParameterCount else {
            throw AccountError(.invalidArgument, "customParameter has more than \(FieldLimits.customParameterCount) entries.")
        }
        for (name, value) in request.customParameters {
            try FieldLimits.check(name, "customParameter", FieldLimits.customParameter)
            try FieldLimits.check(value, "customParameter.\(name)", FieldLimits.customParameter)
        }
    }

    /// §A.5: the bounds of decision 17, steps 1–3, the client's flow bucket; then the URL built and,
    /// only once it could be, the flow recorded.
    package func createAuthURI(_ request: AuthURIRequest, sessionID: String) async throws -> String {
        try Self.checkBounds(request, sessionID: sessionID)
        let providerID = request.providerID.lowercased()
        guard let config = try await enabledConfig(providerID) else {
            throw AccountError(.operationNotAllowed, "The identity provider configuration is not found.")
        }
        guard let continueURI = request.continueURI, !continueURI.isEmpty else { throw AccountError(.missingContinueURI) }
        guard let components = URLComponents(string: continueURI), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty, components.fragment == nil,
            !(components.queryItems ?? []).contains(where: { $0.name == "state" })
        else { throw AccountError(.invalidContinueURI) }
        guard ProjectSettings.isAuthorized(host: host, in: try await environment.authorizedDomains()) else {
            throw AccountError(.unauthorizedDomain, "Domain not allowlisted by project")
        }
        let apple = providerID == "apple.com"
        let codeFlow =
            apple
            || config.codeFlow
            || (providerID == "google.com" && config.clientSecret != nil
                && (request.authFlowType == "CODE_FLOW" || request.oauthScope != nil))
        // Every flow is a row for ten minutes: a client starts a bounded number (decision 17), and
        // the project a bounded total, however many addresses its clients hold.
        try await environment.limiter.consume(.authFlowsPerIP, request.address.map(AbuseLimiter.networkKey))
        if request.address != nil { try await environment.limiter.consume(.authFlowsPerProject, environment.settings.projectID) }
        let state = Base64URL.encode(environment.random.bytes(32))
        var items: [(String, String)] = [
            ("response_type", apple ? "code id_token" : codeFlow ? "code" : "id_token"), ("client_id", config.clientID),
            ("redirect_uri", continueURI), ("state", state),
        ]
        var scopes = codeFlow && !apple ? (config.options.scopes ?? ["openid", "email", "profile"]) : ["openid"]
        if apple { scopes = ["openid", "email", "name"] }
        for scope in (request.oauthScope ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        where !scopes.contains(scope) {
            scopes.append(scope)
        }
        items.append(("scope", scopes.joined(separator: " ")))
        items.append(("nonce", flowNonce(state)))
        if codeFlow && !apple {
            items.append(("code_challenge", Base64URL.encode(sha256(Array(pkceVerifier(state).utf8)))))
            items.append(("code_challenge_method", "S256"))
        }
        if let hostedDomain = request.hostedDomain { items.append(("hd", hostedDomain)) }
        if let identifier = request.identifier, EmailAddress.normalize(identifier) != nil { items.append(("login_hint", identifier)) }
        if apple { items.append(("response_mode", "form_post")) }
        for (name, value) in request.customParameters.sorted(by: { $0.key < $1.key }) where !Self.reservedParameters.contains(name) {
            items.append((name, value))
        }
        guard var url = URLComponents(string: try await endpoints.authorizationEndpoint(config)) else { throw IdPTokenRules.unreachable }
        let existing = url.queryItems ?? []
        url.queryItems = existing + items.map { URLQueryItem(name: $0.0, value: $0.1) }
        // `+` is a space to form decoders: encode it, as every other reserved character is.
        let query = url.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        url.percentEncodedQuery = query
        guard let authURI = url.string else { throw IdPTokenRules.unreachable }
        // Written only now that the IdP's URL is known: a provider that cannot be reached leaves no row.
        let now = environment.clock.now()
        try await store.createFlow(
            stateHash: sha256(Array(state.utf8)),
            flow: IdPFlow(
                providerID: providerID, sessionID: sessionID, redirectURI: continueURI, context: request.context,
                codeFlow: codeFlow && (!apple || config.apple?.privateKey != nil), expiresAt: now + 600),
            now: now)
        return authURI
    }

    /// The nonce a flow's ID token must carry: derived from its state, never stored.
    func flowNonce(_ state: String) -> String { Hex.encode(flowKey("nonce" + state)) }

    /// The PKCE verifier of a flow: derived from its state, never stored.
    func pkceVerifier(_ state: String) -> String { Base64URL.encode(flowKey("pkce" + state)) }

    /// §A.5 "The callback": the flow found and checked, its credential obtained and verified;
    /// returns the assertion, the state's hash (spent with the sign-in), the flow, the provider's
    /// config (read once) and the tokens a code exchange obtained.
    func completeFlow(_ parameters: [String: String], requestURI: URLComponents, sessionID: String?) async throws -> (
        IdPAssertion, [UInt8], IdPFlow, IdPConfig, [String: JSONValue]
    ) {
        if let error = parameters["error"] {
            let description = parameters["error_description"] ?? ""
            if error == "access_denied" { throw AccountError(.userCancelled, description.isEmpty ? nil : String(description.prefix(500))) }
            throw AccountError(.invalidIDPResponse, "\(error.prefix(100)) \(description.prefix(500))")
        }
        let state = parameters["state"] ?? ""
        let stateHash = sha256(Array(state.utf8))
        let unknown = AccountError(.invalidIDPResponse, "The sign-in session is unknown or expired.")
        guard let flow = try await store.flow(stateHash: stateHash), flow.usedAt == nil, flow.expiresAt > environment.clock.now() else {
            throw unknown
        }
        guard ConstantTime.equal(sessionID ?? "", flow.sessionID) else {
            throw AccountError(.invalidIDPResponse, "sessionId does not match.")
        }
        guard let redirect = URLComponents(string: flow.redirectURI), redirect.scheme?.lowercased() == requestURI.scheme?.lowercased(),
            redirect.host?.lowercased() == requestURI.host?.lowercased(), redirect.port == requestURI.port,
            redirect.path == requestURI.path
        else { throw AccountError(.invalidRequestURI) }
        guard let config = try await enabledConfig(flow.providerID) else { throw unknown }
        var tokens: [String: JSONValue] = [:]
        var idToken = parameters["id_token"]
        if flow.codeFlow {
            guard let code = parameters["code"], !code.isEmpty else { throw IdPTokenRules.unparsable }
            var form: [(String, String)] = [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", flow.redirectURI), ("client_id", config.clientID),
            ]
            if let secret = config.clientSecret { form.append(("client_secret", secret)) }
            if config.providerID != "apple.com" { form.append(("code_verifier", pkceVerifier(state))) }
            tokens = try await endpoints.exchangeCode(config, form: form)
            idToken = tokens["id_token"]?.stringValue
        }
        guard let raw = idToken, !raw.isEmpty else { throw IdPTokenRules.unparsable }
        let token = try IdPTokenRules.parse(raw)
        try IdPTokenRules.checkHeader(token)
        try await verifier.verifySignature(token, config: config)
        try IdPTokenRules.checkClaims(token, config: config, now: environment.clock.now())
        // The flow is single-use: its nonce is compared as sent, with no used-nonce row.
        guard token.payload["nonce"]?.stringValue == flowNonce(state) else {
            throw AccountError(.missingOrInvalidNonce, "Nonce does not match.")
        }
        return (IdPTokenRules.assertion(token.payload, providerID: flow.providerID), stateHash, flow, config, tokens)
    }
}
