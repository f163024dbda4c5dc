import AccountCore
import HTTPTypes

/// The client-configuration routes the SDKs fetch before they sign anyone in
/// (federation-and-limits.md §D.1–D.5): reCAPTCHA (never enforced), the password policy, the
/// project's configuration, the session-cookie keys. GET, a client key or an admin bearer.
enum ClientConfigurationRPC {
    struct RecaptchaConfig: Encodable, Sendable {
        struct Enforcement: Encodable, Sendable {
            var provider: String
            var enforcementState = "OFF"
        }
        var recaptchaKey: String
        var recaptchaEnforcementState = [Enforcement(provider: "EMAIL_PASSWORD_PROVIDER"), Enforcement(provider: "PHONE_PROVIDER")]
        var useSmsBotScore = false
        var useSmsTollFraudProtection = false
    }

    struct PasswordPolicyWire: Encodable, Sendable {
        struct Strength: Encodable, Sendable {
            var minPasswordLength: Int
            var maxPasswordLength: Int
        }
        var customStrengthOptions: Strength
        var allowedNonAlphanumericCharacters = Self.nonAlphanumeric
        var enforcementState: String
        var forceUpgradeOnSignin = false
        var schemaVersion = 1

        /// The characters Firebase counts as non-alphanumeric, in its order.
        static let nonAlphanumeric = [
            "^", "$", "*", ".", "[", "]", "{", "}", "(", ")", "?", "\"", "!", "@", "#", "%", "&", "/", "\\", ",", ">", "<", "'", ":",
            ";", "|", "_", "~", "`",
        ]
    }

    struct ProjectConfig: Encodable, Sendable {
        var projectId: String
        var authorizedDomains: [String]
        var allowPasswordUser: Bool?
        var enableAnonymousUser: Bool?
    }

    struct RecaptchaParams: Encodable, Sendable {
        var kind = "identitytoolkit#GetRecaptchaParamResponse"
        var recaptchaSiteKey: String
    }

    /// `GET /v2/recaptchaConfig` (§D.1): every provider `OFF`, so the JS SDK loads no script.
    static func recaptchaConfig(_ settings: ProjectSettings) -> RPCEndpoint {
        RPCEndpoint(method: .get) { _ in
            try WireEncoding.response(RecaptchaConfig(recaptchaKey: "projects/\(settings.projectID)/keys/\(settings.recaptchaSiteKey)"))
        }
    }

    /// `GET /v2/passwordPolicy` (§D.2): the §1.5 rules the server enforces.
    static func passwordPolicy(_ settings: ProjectSettings) -> RPCEndpoint {
        RPCEndpoint(method: .get) { _ in
            let policy = settings.passwordPolicy
            return try WireEncoding.response(
                PasswordPolicyWire(
                    customStrengthOptions: .init(minPasswordLength: policy.minimumLength, maxPasswordLength: policy.maximumLength),
                    enforcementState: policy.isEnforced ? "ENFORCE" : "OFF"))
        }
    }

    /// `GET /v1/projects` (§D.3): the project number and authorized domains; admins also learn
    /// which sign-ins are allowed.
    static func projectConfig(_ environment: ServiceEnvironment) -> RPCEndpoint {
        let settings = environment.settings
        return RPCEndpoint(method: .get) { call in
            var config = ProjectConfig(projectId: settings.projectNumber, authorizedDomains: try await environment.authorizedDomains())
            if call.caller.isAdmin {
                config.allowPasswordUser = settings.allowPasswordSignup
                config.enableAnonymousUser = settings.allowAnonymous
            }
            return try WireEncoding.response(config)
        }
    }

    /// `GET /v1/recaptchaParams` (§D.4).
    static func recaptchaParams(_ settings: ProjectSettings) -> RPCEndpoint {
        RPCEndpoint(method: .get) { _ in try WireEncoding.response(RecaptchaParams(recaptchaSiteKey: settings.recaptchaSiteKey)) }
    }

    /// `GET /v1/sessionCookiePublicKeys` (§D.5): the keys that sign session cookies, as JWKS.
    static func sessionCookieKeys(_ signer: any TokenSigner) -> RPCEndpoint {
        RPCEndpoint(method: .get) { _ in
            let keys = try await signer.publishedKeys()
            return try WireEncoding.response(
                APIRoutes.JWKS(keys: keys.map { APIRoutes.JWK(kid: $0.kid, n: $0.modulus, e: $0.exponent) }),
                headers: [.cacheControl: "public, max-age=3600"])
        }
    }
}

/// Identity Toolkit methods Google has and this server does not (federation-and-limits.md §D.6):
/// `OPERATION_NOT_ALLOWED`, after the caller checks, never a 404 (which the SDKs turn into a
/// confusing `auth/not-found`). Adding a route removes its entry here.
enum UnsupportedRPC {
    /// Route name → the name the refusal gives, for every method of the route.
    static let methods: [String: String] = [
        "signInWithGameCenter": "accounts:signInWithGameCenter", "verifyIosClient": "accounts:verifyIosClient",
        "issueSamlResponse": "accounts:issueSamlResponse", "v2/accounts:revokeToken": "accounts:revokeToken",
        "v2/accounts/passkeyEnrollment:start": "passkeyEnrollment:start",
        "v2/accounts/passkeyEnrollment:finalize": "passkeyEnrollment:finalize", "v2/accounts/passkeySignIn:start": "passkeySignIn:start",
        "v2/accounts/passkeySignIn:finalize": "passkeySignIn:finalize",
        "v2/identityPlatform:initializeAuth": "identityPlatform:initializeAuth", "v2/inboundSamlConfigs": "inboundSamlConfigs",
        "v3/signOutUser": "signOutUser", "v3/setProjectConfig": "setProjectConfig",
    ]

    static func endpoint(_ detail: String) -> RPCEndpoint {
        RPCEndpoint(anyMethod: true) { _ in throw AccountError(.operationNotAllowed, detail) }
    }
}
