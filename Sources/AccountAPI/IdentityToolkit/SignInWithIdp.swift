import AccountCore

/// `accounts:signInWithIdp` (federation-and-limits.md §A.2, §A.10). `needConfirmation` and
/// `errorMessage` appear only when set: the JS SDK treats the mere key as an error.
enum SignInWithIdpRPC {
    static func endpoint(_ service: FederatedSignInService) -> RPCEndpoint {
        RPCEndpoint { call in
            var request = FederatedSignInService.Request(client: call.client)
            request.requestURI = try call.body.string("requestUri")
            request.postBody = try call.body.string("postBody")
            request.sessionID = try call.body.string("sessionId")
            request.pendingToken = try call.body.nonEmptyString("pendingToken")
            request.idToken = try call.body.nonEmptyString("idToken")
            request.returnIdpCredential = try call.body.bool("returnIdpCredential") ?? false
            request.returnRefreshToken = try call.body.bool("returnRefreshToken") ?? false
            request.autoCreate = try call.body.bool("autoCreate") ?? true
            request.isAdmin = call.caller.isAdmin
            let result = try await service.signIn(request)
            return WireEncoding.response(
                json: .object(
                    body(result, lifetime: service.environment.settings.idTokenLifetimeSeconds)))
        }
    }

    static func body(_ result: FederatedSignInService.Result, lifetime: Int64) -> [String: JSONValue] {
        let assertion = result.assertion
        var body: [String: JSONValue] = [
            "kind": .string("identitytoolkit#VerifyAssertionResponse"), "federatedId": .string(assertion.federatedID),
            "providerId": .string(assertion.providerID), "rawUserInfo": .string(assertion.rawUserInfo),
            "pendingToken": .string(result.pendingToken), "emailVerified": .bool(assertion.emailVerified),
        ]
        if let email = assertion.email { body["email"] = .string(email) }
        if let token = result.oauthIDToken { body["oauthIdToken"] = .string(token) }
        if let token = result.oauthAccessToken { body["oauthAccessToken"] = .string(token) }
        if let expires = result.oauthExpiresIn { body["oauthExpireIn"] = .int(expires) }
        if let token = result.oauthRefreshToken { body["oauthRefreshToken"] = .string(token) }
        if let context = result.context { body["context"] = .string(context) }
        func describe(_ user: UserRecord) {
            body["localId"] = .string(user.localID)
            if let name = assertion.displayName {
                body["displayName"] = .string(name)
                body["fullName"] = .string(name)
            }
            for (key, value) in [
                ("firstName", assertion.firstName), ("lastName", assertion.lastName), ("photoUrl", assertion.photoURL),
                ("screenName", assertion.screenName),
            ] {
                if let value { body[key] = .string(value) }
            }
            if let accountEmail = user.email {
                if accountEmail == assertion.email {
                    body["emailVerified"] = .bool(user.emailVerified)
                } else {
                    body["originalEmail"] = .string(accountEmail)
                }
            }
        }
        switch result.outcome {
        case .signedIn(let user, let tokens, let isNewUser, let emailRecycled):
            describe(user)
            if isNewUser { body["isNewUser"] = .bool(true) }
            if emailRecycled { body["emailRecycled"] = .bool(true) }
            body["idToken"] = .string(tokens.idToken)
            body["refreshToken"] = .string(tokens.refreshToken)
            body["expiresIn"] = .string(String(lifetime))
        case .secondFactor(let user, let required):
            describe(user)
            body.merge(MFAWire.pendingFields(required)) { _, pending in pending }
        case .needConfirmation(let localID, let providers):
            body["needConfirmation"] = .bool(true)
            if let localID { body["localId"] = .string(localID) }
            if !providers.isEmpty { body["verifiedProvider"] = .array(providers.map(JSONValue.string)) }
        case .failed(let code):
            body["errorMessage"] = .string(code.firebaseMessage)
        }
        return body
    }
}
