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

    struct FlowResponse: Encodable, Sendable {
        var kind = "identitytoolkit#CreateAuthUriResponse"
        var authUri: String
        var providerId: String
        var sessionId: String
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func endpoint(_ service: AccountService, federation: FederatedSignInService) -> RPCEndpoint {
        RPCEndpoint { call in
            if let provider = try call.body.nonEmptyString("providerId"), provider != "password" {
                // A redirect flow (federation-and-limits.md §A.5).
                let sessionID = try call.body.nonEmptyString("sessionId") ?? service.randomIdentifier(count: 27, alphabet: alphabet)
                var request = FederatedSignInService.AuthURIRequest(providerID: provider)
                request.continueURI = try call.body.string("continueUri")
                request.context = try call.body.string("context")
                request.oauthScope = try call.body.string("oauthScope")
                request.hostedDomain = try call.body.string("hostedDomain")
                request.authFlowType = try call.body.string("authFlowType")
                request.identifier = try call.body.string("identifier")
                if case .object(let parameters)? = call.body.value("customParameter") {
                    request.customParameters = parameters.compactMapValues(\.stringValue)
                }
                request.address = call.limitedAddress
                let authURI = try await federation.createAuthURI(request, sessionID: sessionID)
                return try WireEncoding.response(FlowResponse(authUri: authURI, providerId: provider.lowercased(), sessionId: sessionID))
            }
            let sessionID = try call.body.nonEmptyString("sessionId") ?? service.randomIdentifier(count: 27, alphabet: alphabet)
            // Echoed back: bounded as a flow's is (decision 17).
            try FieldLimits.check(sessionID, "sessionId", FieldLimits.sessionID)
            let discovery = try await service.discover(
                identifier: try call.body.string("identifier"), continueURI: try call.body.string("continueUri"),
                address: call.limitedAddress, isAdmin: call.caller.isAdmin
            )
            return try WireEncoding.response(
                Response(
                    registered: discovery.registered, allProviders: discovery.allProviders, signinMethods: discovery.signinMethods,
                    sessionId: sessionID))
        }
    }
}
