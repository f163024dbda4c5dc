import Foundation

/// Provider configuration (federation-and-limits.md §B): the Identity Toolkit v2 resources
/// `oauthIdpConfigs` and `defaultSupportedIdpConfigs`, validated in §B.3's order. Bodies arrive as
/// JSON objects in the resource's wire fields; the API layer renders the result.
package struct IdPConfigService: Sendable {
    package let store: any IdPConfigStore
    package let settings: ProjectSettings
    package let clock: any WallClock

    /// Wires the service.
    package init(store: any IdPConfigStore, settings: ProjectSettings, clock: any WallClock) {
        self.store = store
        self.settings = settings
        self.clock = clock
    }

    /// Which collection a request names.
    package enum Collection: Sendable {
        /// `oauthIdpConfigs` (`oidc.*`).
        case oidc
        /// `defaultSupportedIdpConfigs` (`google.com`, `apple.com`).
        case defaultSupported

        var resourceName: String { self == .oidc ? "OAuthIdpConfig" : "DefaultSupportedIdpConfig" }
    }

    /// The built-in providers accountd verifies (`GET /v2/defaultSupportedIdps`).
    package static let defaultSupportedIDs = ["apple.com", "google.com"]

    /// Whether `id` is a well-formed OIDC provider id: `oidc.` then a lower-case letter, letters,
    /// digits, `-`, `_`, `.`, ending alphanumeric, at least 2 characters.
    package static func isOIDCProviderID(_ id: String) -> Bool {
        guard id.hasPrefix("oidc.") else { return false }
        let rest = Array(id.utf8.dropFirst(5))
        guard rest.count >= 2, let first = rest.first, let last = rest.last, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first)
        else { return false }
        let alphanumeric = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        return alphanumeric(last)
            && rest.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }

    /// Creates `id` in `collection` from `body`.
    package func create(_ collection: Collection, id: String?, body: [String: JSONValue]) async throws -> IdPConfig {
        let id = try Self.checkID(collection, id)
        if try await store.idpConfig(id) != nil {
            throw AccountError(.configurationExists, "The \(collection.resourceName) already exists with config_id: \(id)")
        }
        let now = clock.now()
        var config = IdPConfig(providerID: id, clientID: "", createdAt: now, updatedAt: now)
        try apply(body, paths: JSONValue.leafPaths(of: body), to: &config)
        try validate(config)
        try await store.createIdPConfig(config)
        return config
    }

    /// Reads one.
    package func get(_ collection: Collection, id: String) async throws -> IdPConfig {
        guard Self.belongs(id, to: collection), let config = try await store.idpConfig(id) else {
            throw AccountError(.configurationNotFound)
        }
        return config
    }

    /// Updates the fields `mask` names (every field present in `body` without a mask); a masked
    /// field absent from the body is cleared.
    package func update(_ collection: Collection, id: String, body: [String: JSONValue], mask: [String]?) async throws -> IdPConfig {
        var config = try await get(collection, id: id)
        try apply(body, paths: mask ?? JSONValue.leafPaths(of: body), to: &config)
        try validate(config)
        config.updatedAt = clock.now()
        try await store.updateIdPConfig(config)
        return config
    }

    /// Deletes one; its links stay.
    package func delete(_ collection: Collection, id: String) async throws {
        guard Self.belongs(id, to: collection), try await store.deleteIdPConfig(id) else { throw AccountError(.configurationNotFound) }
    }

    /// A page by id (`pageSize` 1–100, default 100) and the token of the next.
    package func list(_ collection: Collection, pageSize: Int?, pageToken: String?) async throws -> ([IdPConfig], String?) {
        let limit = min(max(pageSize ?? 100, 1), 100)
        var after: String?
        if let pageToken, !pageToken.isEmpty {
            guard let bytes = Base64URL.decode(pageToken), let id = String(bytes: bytes, encoding: .utf8) else {
                throw AccountError(.invalidPageSelection)
            }
            after = id
        }
        let page = try await store.idpConfigs(defaultSupported: collection == .defaultSupported, after: after, limit: limit + 1)
        let configs = Array(page.prefix(limit))
        return (configs, page.count > limit ? configs.last.map { Base64URL.encode(Array($0.providerID.utf8)) } : nil)
    }

    // MARK: Rules

    private static func checkID(_ collection: Collection, _ id: String?) throws(AccountError) -> String {
        guard let id, !id.isEmpty else { throw AccountError(.missingConfigID) }
        switch collection {
        case .oidc:
            guard isOIDCProviderID(id) else {
                throw AccountError(
                    .invalidConfigID,
                    "Oauth_idp_config_id must start with 'oidc.' and can only have alphanumeric characters, hyphens, underscores or periods. The part after 'oidc.' must also start with a lowercase letter, end with an alphanumeric character, and have at least 2 characters."
                )
            }
        case .defaultSupported:
            guard defaultSupportedIDs.contains(id) else { throw AccountError(.invalidConfigID, "\(id) is not supported by this server.") }
        }
        return id
    }

    private static func belongs(_ id: String, to collection: Collection) -> Bool {
        collection == .oidc ? isOIDCProviderID(id) : defaultSupportedIDs.contains(id)
    }

    /// Sets (or, absent from the body, clears) each of `paths` on `config`.
    private func apply(_ body: [String: JSONValue], paths: [String], to config: inout IdPConfig) throws(AccountError) {
        func string(_ path: String) throws(AccountError) -> String? {
            switch JSONValue.object(body).value(at: path) {
            case nil: return nil
            case .string(let text)?: return text
            default: throw AccountError(.invalidConfig, "\(path) must be a string.")
            }
        }
        func bool(_ path: String) throws(AccountError) -> Bool {
            switch JSONValue.object(body).value(at: path) {
            case nil: return false
            case .bool(let flag)?: return flag
            default: throw AccountError(.invalidConfig, "\(path) must be a boolean.")
            }
        }
        func strings(_ path: String) throws(AccountError) -> [String]? {
            switch JSONValue.object(body).value(at: path) {
            case nil: return nil
            case .array(let items)?:
                var result: [String] = []
                for item in items {
                    guard case .string(let text) = item, !text.isEmpty else {
                        throw AccountError(.invalidConfig, "\(path) must be a list of strings.")
                    }
                    result.append(text)
                }
                return result
            default: throw AccountError(.invalidConfig, "\(path) must be a list of strings.")
            }
        }
        let oidc = !config.isDefaultSupported
        for path in paths {
            switch path {
            case "name": break  // output only
            case "displayName": config.displayName = try string(path)
            case "enabled": config.enabled = try bool(path)
            case "clientId": config.clientID = try string(path) ?? ""
            case "clientSecret": config.clientSecret = try string(path).flatMap { $0.isEmpty ? nil : $0 }
            case "issuer" where oidc: config.issuer = try string(path)
            case "responseType" where oidc:
                config.codeFlow = try bool("responseType.code")
            case "responseType.code" where oidc: config.codeFlow = try bool(path)
            case "responseType.idToken" where oidc:
                // idToken and code are exclusive: setting one is the flow; clearing idToken asks for code.
                config.codeFlow = !(try bool(path))
            case "appleSignInConfig" where config.providerID == "apple.com",
                "appleSignInConfig.bundleIds" where config.providerID == "apple.com":
                var apple = config.apple ?? AppleSignIn()
                apple.bundleIDs = try strings("appleSignInConfig.bundleIds") ?? []
                if path == "appleSignInConfig" {
                    apple.teamID = try string("appleSignInConfig.codeFlowConfig.teamId")
                    apple.keyID = try string("appleSignInConfig.codeFlowConfig.keyId")
                    apple.privateKey = try string("appleSignInConfig.codeFlowConfig.privateKey")
                }
                config.apple = apple
            case "appleSignInConfig.codeFlowConfig" where config.providerID == "apple.com",
                "appleSignInConfig.codeFlowConfig.teamId" where config.providerID == "apple.com",
                "appleSignInConfig.codeFlowConfig.keyId" where config.providerID == "apple.com",
                "appleSignInConfig.codeFlowConfig.privateKey" where config.providerID == "apple.com":
                var apple = config.apple ?? AppleSignIn()
                let all = path == "appleSignInConfig.codeFlowConfig"
                if all || path.hasSuffix("teamId") { apple.teamID = try string("appleSignInConfig.codeFlowConfig.teamId") }
                if all || path.hasSuffix("keyId") { apple.keyID = try string("appleSignInConfig.codeFlowConfig.keyId") }
                if all || path.hasSuffix("privateKey") { apple.privateKey = try string("appleSignInConfig.codeFlowConfig.privateKey") }
                config.apple = apple
            case "accountdOptions":
                config.options = IdPOptions()
                for child in [
                    "additionalClientIds", "trustedEmailDomains", "trustHostedDomain", "scopes", "discoveryUrl", "jwksUri",
                    "authorizationEndpoint", "tokenEndpoint",
                ] where JSONValue.object(body).value(at: "accountdOptions." + child) != nil {
                    try applyOption("accountdOptions." + child, body: body, to: &config, string: string, bool: bool, strings: strings)
                }
            case let option where option.hasPrefix("accountdOptions."):
                try applyOption(option, body: body, to: &config, string: string, bool: bool, strings: strings)
            default:
                throw AccountError(.invalidConfig, "\(path) is not a valid field")
            }
        }
    }

    private func applyOption(
        _ path: String, body: [String: JSONValue], to config: inout IdPConfig, string: (String) throws(AccountError) -> String?,
        bool: (String) throws(AccountError) -> Bool, strings: (String) throws(AccountError) -> [String]?
    ) throws(AccountError) {
        switch path {
        case "accountdOptions.additionalClientIds": config.options.additionalClientIDs = try strings(path) ?? []
        case "accountdOptions.trustedEmailDomains":
            config.options.trustedEmailDomains = try strings(path).map { $0.map { $0.lowercased() } }
        case "accountdOptions.trustHostedDomain" where config.providerID == "google.com":
            config.options.trustHostedDomain = JSONValue.object(body).value(at: path) == nil ? true : try bool(path)
        case "accountdOptions.scopes": config.options.scopes = try strings(path)
        // Built-in providers take them too, for a mirror of Google's or Apple's keys (and tests).
        case "accountdOptions.discoveryUrl": config.options.discoveryURL = try string(path)
        case "accountdOptions.jwksUri": config.options.jwksURI = try string(path)
        case "accountdOptions.authorizationEndpoint": config.options.authorizationEndpoint = try string(path)
        case "accountdOptions.tokenEndpoint": config.options.tokenEndpoint = try string(path)
        default: throw AccountError(.invalidConfig, "\(path) is not a valid field")
        }
    }

    /// §B.3's order after the id: client id, issuer, response type, secret; then the URLs of options.
    private func validate(_ config: IdPConfig) throws(AccountError) {
        guard !config.clientID.isEmpty else {
            throw AccountError(
                .missingOAuthClientID,
                "Client_id in \(config.isDefaultSupported ? "DefaultSupportedIdpConfig" : "OAuthIdpConfig") cannot be empty.")
        }
        if !config.isDefaultSupported {
            guard let issuer = config.issuer, !issuer.isEmpty else { throw AccountError(.missingIssuer) }
            guard isAcceptableURL(issuer) else { throw AccountError(.invalidIssuer, "Issuer in OAuthIdpConfig should be a valid URL.") }
            if config.codeFlow && config.clientSecret == nil {
                throw AccountError(.invalidConfig, "client_secret cannot be empty for code flow.")
            }
        }
        if let apple = config.apple, apple.teamID != nil || apple.keyID != nil || apple.privateKey != nil,
            apple.teamID?.isEmpty != false || apple.keyID?.isEmpty != false || apple.privateKey?.isEmpty != false
        {
            throw AccountError(.invalidConfig, "codeFlowConfig needs teamId, keyId and privateKey.")
        }
        for (name, url) in [
            ("discoveryUrl", config.options.discoveryURL), ("jwksUri", config.options.jwksURI),
            ("authorizationEndpoint", config.options.authorizationEndpoint), ("tokenEndpoint", config.options.tokenEndpoint),
        ] {
            if let url, !isAcceptableURL(url) { throw AccountError(.invalidConfig, "accountdOptions.\(name) is not a valid field") }
        }
    }

    /// An `https` URL without a fragment; `http` only to a loopback host, and only for a `demo-`
    /// project (tests and local issuers).
    package func isAcceptableURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty, components.fragment == nil
        else { return false }
        switch components.scheme?.lowercased() {
        case "https": return true
        case "http": return settings.projectID.hasPrefix("demo-") && ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host.lowercased())
        default: return false
        }
    }
}
