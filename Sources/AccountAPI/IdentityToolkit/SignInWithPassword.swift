import AccountCore

/// `accounts:signInWithPassword` (identity-toolkit.md §4.2).
enum SignInWithPasswordRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#VerifyPasswordResponse"
        var localId: String
        var email: String
        var displayName: String?
        var registered = true
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let signedIn = try await service.signInWithPassword(
                email: try call.body.string("email"), password: try call.body.string("password"), client: call.client
            )
            return try WireEncoding.response(
                WithTokens(
                    base: Response(
                        localId: signedIn.user.localID, email: signedIn.user.email ?? "", displayName: signedIn.user.displayName),
                    tokens: TokenBundleWire(signedIn.tokens, lifetime: service.settings.idTokenLifetimeSeconds)
                )
            )
        }
    }
}
