import AccountCore

/// `accounts:createAuthUri`: sign-in-method discovery (identity-toolkit.md §4.5, §2.4).
enum CreateAuthUriRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#CreateAuthUriResponse"
        var registered: Bool?
        var allProviders: [String]?
        var signinMethods: [String]?
        var sessionId: String
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            if let provider = try call.body.nonEmptyString("providerId"), provider != "password" {
                throw AccountError(.operationNotAllowed, "Federated sign-in is not enabled.")
            }
            let user = try await service.discover(
                identifier: try call.body.string("identifier"), continueURI: try call.body.string("continueUri"),
                address: call.limitedAddress
            )
            let sessionID = try call.body.nonEmptyString("sessionId") ?? service.randomIdentifier(count: 27, alphabet: alphabet)
            if service.settings.emailEnumerationProtection && !call.caller.isAdmin {
                return try WireEncoding.response(Response(sessionId: sessionID))
            }
            return try WireEncoding.response(
                Response(
                    registered: user != nil, allProviders: user?.allProviders ?? [], signinMethods: user?.signinMethods ?? [],
                    sessionId: sessionID
                )
            )
        }
    }
}
