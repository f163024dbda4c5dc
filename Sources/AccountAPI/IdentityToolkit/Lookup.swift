import AccountCore

/// `accounts:lookup` (reference §4.6): a client reads itself by ID token; an admin looks users up
/// by ids, emails and phone numbers.
enum LookupRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#GetAccountInfoResponse"
        var users: [UserInfoWire]?
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            if call.caller.isAdmin, !body.has("idToken") {
                let ids = try body.strings("localId") ?? []
                let emails = try body.strings("email") ?? []
                let phones = try body.strings("phoneNumber") ?? []
                for list in [ids, emails, phones] where list.count > 100 {
                    throw AccountError(.invalidIdentifier, "At most 100 identifiers of each kind")
                }
                let users = try await service.store.users(
                    localIDs: ids, emails: emails.compactMap(EmailAddress.normalize), phoneNumbers: phones
                )
                return try WireEncoding.response(Response(users: users.isEmpty ? nil : users.map(UserInfoWire.init)))
            }
            let user = try await service.lookup(idToken: try body.string("idToken"))
            return try WireEncoding.response(Response(users: [UserInfoWire(user)]))
        }
    }
}
