import AccountCore

/// `accounts:verifyIdToken` (identity-toolkit.md §4.18, admin): signature, expiry and, with `checkRevoked`,
/// user state and single-session revocation.
enum VerifyIdTokenRPC {
    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let checkRevoked = try call.body.bool("checkRevoked") ?? false
            let caller = try await service.authenticate(try call.body.string("idToken"), mode: .verify(checkRevoked: checkRevoked))
            return WireEncoding.response(
                json: .object([
                    "localId": .string(caller.localID), "sessionId": .string(caller.sessionID), "claims": .object(caller.claims),
                ])
            )
        }
    }
}
