import AccountCore
import Hummingbird

/// `accounts:lookup` (identity-toolkit.md §4.6): a client reads itself by ID token; an admin looks users up
/// by ids, emails and phone numbers.
enum LookupRPC {
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
                // Nothing to look up is a malformed request, as production answers it, not "nobody".
                if ids.isEmpty && emails.isEmpty && phones.isEmpty && !body.has("federatedUserId") && !body.has("initialEmail") {
                    throw AccountError(.missingIDToken)
                }
                // federatedUserId: [{providerId, rawId}] (the Admin SDKs' get_user_by_provider_uid).
                var federated: [(providerID: String, rawID: String)] = []
                if case .array(let entries)? = body.fields["federatedUserId"] {
                    for entry in entries {
                        guard let object = entry.objectValue, let provider = object["providerId"]?.stringValue,
                            let raw = object["rawId"]?.stringValue
                        else { throw AccountError(.invalidIdentifier, "federatedUserId entries need providerId and rawId") }
                        federated.append((provider, raw))
                    }
                }
                if federated.count > 100 { throw AccountError(.invalidIdentifier, "At most 100 identifiers of each kind") }
                let users = try await service.users(
                    localIDs: ids, emails: emails.compactMap(EmailAddress.normalize), phoneNumbers: phones, federatedIDs: federated
                )
                return response(users)
            }
            return response([try await service.lookup(idToken: try body.string("idToken"))])
        }
    }

    /// The response, written without `JSONEncoder` (lookup is a hot path).
    static func response(_ users: [UserRecord]) -> Response {
        var fields: [String: JSONValue] = ["kind": .string("identitytoolkit#GetAccountInfoResponse")]
        if !users.isEmpty { fields["users"] = .array(users.map { UserInfoWire($0).json }) }
        return WireEncoding.response(json: .object(fields))
    }
}
