import AccountCore

/// `POST /v1/token` (identity-toolkit.md §4.17): refresh with rotation.
enum TokenRoute {
    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let (user, tokens) = try await service.refresh(
                grantType: try call.body.string("grantType"), refreshToken: try call.body.string("refreshToken"), client: call.client
            )
            return WireEncoding.response(
                json: .object([
                    "access_token": .string(tokens.idToken),
                    "expires_in": .string(String(service.settings.idTokenLifetimeSeconds)),
                    "token_type": .string("Bearer"),
                    "refresh_token": .string(tokens.refreshToken),
                    "id_token": .string(tokens.idToken),
                    "user_id": .string(user.localID),
                    "project_id": .string(service.settings.projectNumber),
                ])
            )
        }
    }
}
