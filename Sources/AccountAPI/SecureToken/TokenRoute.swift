import AccountCore

/// `POST /v1/token` (reference §4.17): refresh with rotation.
enum TokenRoute {
    struct Response: Encodable, Sendable {
        var access_token: String
        var expires_in: String
        var token_type = "Bearer"
        var refresh_token: String
        var id_token: String
        var user_id: String
        var project_id: String
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let (user, tokens) = try await service.refresh(
                grantType: try call.body.string("grantType"), refreshToken: try call.body.string("refreshToken"), client: call.client
            )
            return try WireEncoding.response(
                Response(
                    access_token: tokens.idToken, expires_in: String(service.settings.idTokenLifetimeSeconds),
                    refresh_token: tokens.refreshToken, id_token: tokens.idToken, user_id: user.localID,
                    project_id: service.settings.projectNumber
                )
            )
        }
    }
}
