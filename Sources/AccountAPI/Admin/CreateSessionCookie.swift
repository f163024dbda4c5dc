import AccountCore

/// `projects:createSessionCookie` (identity-toolkit.md §4.14, admin).
enum CreateSessionCookieRPC {
    struct Response: Encodable, Sendable {
        var sessionCookie: String
    }

    static func endpoint(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let cookie = try await service.createSessionCookie(
                idToken: try call.body.string("idToken"), validDuration: try call.body.int64("validDuration")
            )
            return try WireEncoding.response(Response(sessionCookie: cookie))
        }
    }
}
