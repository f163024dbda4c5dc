import AccountCore

/// `accounts:query` (identity-toolkit.md §4.13, admin): count and filter.
enum QueryAccountsRPC {
    struct Response: Encodable, Sendable {
        var recordsCount: String
        var userInfo: [UserInfoWire]?
    }

    static func endpoint(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let body = call.body
            var query = UserQuery()
            for item in try body.objects("expression") ?? [] {
                if let email = try item.string("email") { query.emails.append(email) }
                if let id = try item.string("userId") { query.localIDs.append(id) }
                if let phone = try item.string("phoneNumber") { query.phoneNumbers.append(try PhoneNumber.normalise(phone)) }
            }
            query.emailPrefix = try body.nonEmptyString("emailPrefix")
            let limit = try body.int64("limit") ?? 500
            guard (1...500).contains(limit) else { throw AccountError(.invalidPageSelection, "limit must be 1 to 500") }
            query.limit = Int(limit)
            query.offset = Int(max(0, try body.int64("offset") ?? 0))
            if let sort = try body.string("sortBy") {
                guard let key = UserQuery.SortBy(rawValue: sort) else { throw APIError.invalidJSON("Invalid value at 'sortBy'") }
                query.sortBy = key
            }
            query.descending = try body.string("order") == "DESC"
            let (count, users) = try await service.query(query)
            let returnUserInfo = try body.bool("returnUserInfo") ?? true
            return try WireEncoding.response(
                Response(recordsCount: String(count), userInfo: returnUserInfo && !users.isEmpty ? users.map(UserInfoWire.init) : nil)
            )
        }
    }
}
