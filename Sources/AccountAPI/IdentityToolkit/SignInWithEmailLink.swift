import AccountCore

/// `accounts:signInWithEmailLink` (identity-toolkit.md §4.4), the unverified-account rule included.
enum SignInWithEmailLinkRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#EmailLinkSigninResponse"
        var localId: String
        var email: String
        var isNewUser: Bool
    }

    static func endpoint(_ service: ActionCodeService, access: AccessPolicy) -> RPCEndpoint {
        RPCEndpoint { call in
            let signedIn = try await service.signInWithEmailLink(
                email: try call.body.string("email"), code: try call.body.string("oobCode"),
                idToken: try call.body.nonEmptyString("idToken"), client: call.client, apiKey: call.apiKey(access)
            )
            return try WireEncoding.response(
                WithTokens(
                    base: Response(localId: signedIn.user.localID, email: signedIn.user.email ?? "", isNewUser: signedIn.isNewUser),
                    tokens: TokenBundleWire(signedIn.tokens, lifetime: service.settings.idTokenLifetimeSeconds)
                )
            )
        }
    }
}
