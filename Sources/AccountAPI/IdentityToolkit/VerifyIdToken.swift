import AccountCore

/// `accounts:verifyIdToken` (reference §4.18, admin): signature, expiry and, with `checkRevoked`,
/// user state and single-session revocation.
enum VerifyIdTokenRPC {
    struct Response: Encodable, Sendable {
        var localId: String
        var sessionId: String
        var claims: [String: JSONValue]
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let checkRevoked = try call.body.bool("checkRevoked") ?? false
            let caller = try await service.authenticate(try call.body.string("idToken"), mode: .verify(checkRevoked: checkRevoked))
            return try WireEncoding.response(Response(localId: caller.localID, sessionId: caller.sessionID, claims: caller.claims))
        }
    }
}
