import AccountCore

/// `accounts:delete` (identity-toolkit.md §4.9).
enum DeleteRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#DeleteAccountResponse"
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            if call.caller.isAdmin, !call.body.has("idToken") {
                try await service.adminDelete(localID: try call.body.string("localId"))
            } else {
                try await service.delete(idToken: try call.body.string("idToken"))
            }
            return try WireEncoding.response(Response())
        }
    }
}
