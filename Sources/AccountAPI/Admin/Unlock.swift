import AccountCore

/// `accounts:unlock` (admin only, federation-and-limits.md §E.4): clears an address's password
/// lockout. Body `{email}` or `{localId}`; answers `{email, cleared}`.
enum UnlockRPC {
    struct Response: Encodable, Sendable {
        var email: String
        var cleared: Bool
    }

    static func endpoint(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let (email, cleared) = try await service.unlock(
                email: try call.body.nonEmptyString("email"), localID: try call.body.nonEmptyString("localId"))
            return try WireEncoding.response(Response(email: email, cleared: cleared))
        }
    }
}
