import AccountCore

/// `accounts:signUp`, and admin create at `POST /v1/projects/{p}/accounts` (identity-toolkit.md §4.1).
enum SignUpRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#SignupNewUserResponse"
        var localId: String
        var email: String?
        var displayName: String?
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            let localID = try body.string("localId")
            let email = try body.string("email")
            let password = try body.string("password")
            let displayName = try body.string("displayName")
            let idToken = try body.nonEmptyString("idToken")
            let lifetime = service.settings.idTokenLifetimeSeconds
            if call.caller.isAdmin && idToken == nil {
                let user = try await service.adminCreate(
                    localID: localID, email: email, password: password, phoneNumber: try body.nonEmptyString("phoneNumber"),
                    displayName: displayName, photoURL: try body.string("photoUrl"),
                    emailVerified: try body.bool("emailVerified") ?? false, disabled: try body.bool("disabled") ?? false,
                    factors: try MFAWire.adminFactors(body.value("mfaInfo"))
                )
                return try WireEncoding.response(Response(localId: user.localID, email: user.email, displayName: user.displayName))
            }
            if localID != nil { throw AccountError(.unexpectedParameter, "User ID") }
            if let idToken {
                // Adding email and password to the signed-in user is exactly an update (§4.1 step 6).
                guard service.settings.allowPasswordSignup else { throw AccountError(.operationNotAllowed) }
                _ = try AccountService.requireEmail(email)
                guard password != nil else { throw AccountError(.missingPassword) }
                var input = AccountService.UpdateInput()
                input.email = email
                input.password = password
                input.displayName = displayName
                let updated = try await service.update(idToken: idToken, input: input, client: call.client)
                return try WireEncoding.response(
                    WithTokens(
                        base: Response(localId: updated.user.localID, email: updated.user.email, displayName: updated.user.displayName),
                        tokens: updated.tokens.map { TokenBundleWire($0, lifetime: lifetime) }
                    )
                )
            }
            let signedIn = try await service.signUp(email: email, password: password, displayName: displayName, client: call.client)
            return try WireEncoding.response(
                WithTokens(
                    base: Response(localId: signedIn.user.localID, email: signedIn.user.email, displayName: signedIn.user.displayName),
                    tokens: TokenBundleWire(signedIn.tokens, lifetime: lifetime)
                )
            )
        }
    }
}
