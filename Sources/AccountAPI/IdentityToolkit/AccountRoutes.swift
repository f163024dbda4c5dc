package import AccountCore

extension APIRoutes {
    /// Adds the account and session RPCs of the Identity Toolkit and the token route. (`update` is
    /// added with the email actions, ``addActionCodes(service:access:)``: it also applies codes.)
    package mutating func addAccounts(service: AccountService) {
        register("signUp", SignUpRPC.endpoint(service))
        register("signInWithPassword", SignInWithPasswordRPC.endpoint(service))
        register("createAuthUri", CreateAuthUriRPC.endpoint(service))
        register("lookup", LookupRPC.endpoint(service))
        register("delete", DeleteRPC.endpoint(service))
        register("verifyIdToken", VerifyIdTokenRPC.endpoint(service))
        register("listSessions", SessionsRPC.list(service))
        register("revokeSessions", SessionsRPC.revoke(service))
        token = TokenRoute.endpoint(service)
    }
}
