package import AccountCore

extension APIRoutes {
    /// Adds the email-action RPCs (and `update`'s `oobCode` form).
    package mutating func addActionCodes(service: ActionCodeService, access: AccessPolicy) {
        register("sendOobCode", SendOobCodeRPC.endpoint(service, access: access))
        register("signInWithEmailLink", SignInWithEmailLinkRPC.endpoint(service, access: access))
        register("resetPassword", ResetPasswordRPC.endpoint(service))
        let update = UpdateRPC.endpoint(service.accounts)
        register(
            "update",
            RPCEndpoint { call in
                if let code = try call.body.nonEmptyString("oobCode") {
                    // A token sent along must verify: a caller that sends one and gets a code applied
                    // despite it being forged or revoked would take the refusal for a success.
                    if let idToken = try call.body.nonEmptyString("idToken") { _ = try await service.accounts.authenticate(idToken) }
                    return try WireEncoding.response(try await ApplyActionCodeRPC.respond(service, call: call, code: code, access: access))
                }
                return try await update.handler(call)
            })
    }
}
