import AccountCore

/// `accounts:signInWithCustomToken` (federation-and-limits.md §C.3, §C.4).
enum SignInWithCustomTokenRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#VerifyCustomTokenResponse"
        /// Always present, `false` included (the Admin SDK's users read it).
        var isNewUser: Bool
    }

    static func endpoint(_ service: CustomTokenService) -> RPCEndpoint {
        RPCEndpoint { call in
            let signedIn = try await service.signIn(token: try call.body.string("token"), client: call.client)
            return try WireEncoding.response(
                WithTokens(
                    base: Response(isNewUser: signedIn.isNewUser),
                    tokens: TokenBundleWire(signedIn.tokens, lifetime: service.environment.settings.idTokenLifetimeSeconds)))
        }
    }
}
