import AccountCore

/// `accounts:batchDelete` (identity-toolkit.md §4.12, admin).
enum BatchDeleteRPC {
    struct Item: Encodable, Sendable {
        var index: Int
        var localId: String
        var message: String
    }

    struct Response: Encodable, Sendable {
        var errors: [Item]?
    }

    static func endpoint(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let errors = try await service.batchDelete(
                localIDs: try call.body.strings("localIds") ?? [], force: try call.body.bool("force") ?? false
            )
            return try WireEncoding.response(
                Response(errors: errors.isEmpty ? nil : errors.map { Item(index: $0.index, localId: $0.localID, message: $0.message) })
            )
        }
    }
}
