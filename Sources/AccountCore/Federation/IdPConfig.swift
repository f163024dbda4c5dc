package import Foundation

/// A configured identity provider (federation-and-limits.md §B.1): an OIDC issuer
/// (`oauthIdpConfigs/oidc.*`) or Google or Apple (`defaultSupportedIdpConfigs/…`).
package struct IdPConfig: Sendable, Equatable {
    /// `oidc.<id>`, `google.com` or `apple.com`.
    package var providerID: String
    package var displayName: String?
    package var enabled: Bool
    /// The accepted audience, and the code flow's client (Apple: the Services ID).
    package var clientID: String
    /// The OIDC issuer (`oidc.*` only; Google's and Apple's are built in).
    package var issuer: String?
    /// The authorization-code flow instead of `id_token` (`responseType.code`).
    package var codeFlow: Bool
    /// The client secret, in the clear in memory only; sealed at rest, never returned.
    package var clientSecret: String?
    /// Apple: native apps' bundle ids (more accepted audiences), and the code flow's key.
    package var apple: AppleSignIn?
    package var options: IdPOptions
    package var createdAt: Date
    package var updatedAt: Date

    /// Whether the config is one of the built-in providers (`defaultSupportedIdpConfigs`).
    package var isDefaultSupported: Bool { !providerID.hasPrefix("oidc.") }

    /// Creates a config.
    package init(
        providerID: String, displayName: String? = nil, enabled: Bool = false, clientID: String, issuer: String? = nil,
        codeFlow: Bool = false, clientSecret: String? = nil, apple: AppleSignIn? = nil, options: IdPOptions = IdPOptions(),
        createdAt: Date, updatedAt: Date
    ) {
        self.providerID = providerID
        self.displayName = displayName
        self.enabled = enabled
        self.clientID = clientID
        self.issuer = issuer
        self.codeFlow = codeFlow
        self.clientSecret = clientSecret
        self.apple = apple
        self.options = options
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Every `aud` a token of this provider may carry (§A.4 row 6).
    package var audiences: [String] {
        [clientID] + options.additionalClientIDs + (apple?.bundleIDs ?? [])
    }

    /// The issuers a token of this provider may name (§A.4 row 5).
    package var issuers: [String] {
        switch providerID {
        case "google.com": ["https://accounts.google.com", "accounts.google.com"]
        case "apple.com": ["https://appleid.apple.com"]
        default: issuer.map { [$0] } ?? []
        }
    }

    /// The issuer named in error messages and whose discovery document is read.
    package var primaryIssuer: String { issuers.first ?? "" }

    /// The domains whose verified addresses this provider proves (§A.7), with its defaults: Gmail's
    /// for google.com, any for apple.com, none for an OIDC provider (decision 11: adding a workforce
    /// IdP must not hand it every customer account with the same address; `["*"]` is the
    /// operator's explicit choice).
    package var trustedEmailDomains: [String] {
        if let domains = options.trustedEmailDomains { return domains }
        switch providerID {
        case "google.com": return ["gmail.com", "googlemail.com"]
        case "apple.com": return ["*"]
        default: return []
        }
    }

    /// Whether the provider proves any domain's addresses (`"*"`): the server warns at start.
    package var trustsAnyDomain: Bool { trustedEmailDomains.contains("*") }
}

/// Apple's extra settings (`appleSignInConfig`).
package struct AppleSignIn: Sendable, Equatable {
    package var bundleIDs: [String]
    /// The code flow's signing key: team, key id, and the P-256 private key (PEM; sealed at rest).
    package var teamID: String?
    package var keyID: String?
    package var privateKey: String?

    /// Creates settings.
    package init(bundleIDs: [String] = [], teamID: String? = nil, keyID: String? = nil, privateKey: String? = nil) {
        self.bundleIDs = bundleIDs
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }
}

/// accountd's own settings of a provider (`accountdOptions`).
package struct IdPOptions: Sendable, Equatable, Codable {
    package var additionalClientIDs: [String] = []
    /// nil: the provider's default (§A.7).
    package var trustedEmailDomains: [String]?
    /// google.com: a token's `hd` proves addresses of that domain.
    package var trustHostedDomain = true
    /// Code flow scopes (default `openid email profile`).
    package var scopes: [String]?
    /// Overrides for issuers without discovery.
    package var discoveryURL: String?
    package var jwksURI: String?
    package var authorizationEndpoint: String?
    package var tokenEndpoint: String?

    /// Default options.
    package init() {}
}
