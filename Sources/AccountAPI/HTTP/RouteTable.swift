package import AccountCore

/// Every Identity Toolkit RPC the server answers, by name: `/v1/accounts:NAME` and
/// `/v1/projects/{project}/accounts:NAME` (APIPath). Each handler and its wire types live in one
/// file named after it (`IdentityToolkit/` for the clients' RPCs, `Admin/` for the admin's);
/// the Secure Token route is ``APIRoutes/token``. The fixed routes (health, keys, the action
/// page) add themselves next to their handlers: `addHealth`, `addKeys`, `addActionHandler`.
extension APIRoutes {
    /// Accounts and sessions (clients and admins), and the token route.
    package mutating func addAccounts(service: AccountService) {
        register("signUp", SignUpRPC.endpoint(service))
        register("signInWithPassword", SignInWithPasswordRPC.endpoint(service))
        register("lookup", LookupRPC.endpoint(service))
        register("delete", DeleteRPC.endpoint(service))
        register("verifyIdToken", VerifyIdTokenRPC.endpoint(service))
        register("listSessions", SessionsRPC.list(service))
        register("revokeSessions", SessionsRPC.revoke(service))
        token = TokenRoute.endpoint(service)
    }

    /// Email actions; `update` too, since it applies codes as well as changing accounts.
    package mutating func addActionCodes(service: ActionCodeService, access: AccessPolicy) {
        register("sendOobCode", SendOobCodeRPC.endpoint(service, access: access))
        register("signInWithEmailLink", SignInWithEmailLinkRPC.endpoint(service, access: access))
        register("resetPassword", ResetPasswordRPC.endpoint(service))
        register("update", UpdateRPC.endpoint(service, access: access))
    }

    /// The client configuration the SDKs fetch (federation-and-limits.md §D.1–D.5), and the
    /// methods Google has that this server refuses (§D.6).
    package mutating func addClientSurface(environment: ServiceEnvironment, signer: any TokenSigner) {
        let settings = environment.settings
        register("v2/recaptchaConfig", ClientConfigurationRPC.recaptchaConfig(settings))
        register("v2/passwordPolicy", ClientConfigurationRPC.passwordPolicy(settings))
        register("v1/projects", ClientConfigurationRPC.projectConfig(environment))
        register("v1/recaptchaParams", ClientConfigurationRPC.recaptchaParams(settings))
        register("v1/sessionCookiePublicKeys", ClientConfigurationRPC.sessionCookieKeys(signer))
        for (name, display) in UnsupportedRPC.methods {
            register(name, UnsupportedRPC.endpoint("\(display) is not supported by this server."))
        }
    }

    /// Custom tokens: the client's sign-in and the admin's signers (federation-and-limits.md §C).
    package mutating func addCustomTokens(service: CustomTokenService) {
        register("signInWithCustomToken", SignInWithCustomTokenRPC.endpoint(service))
        register("v1/customTokenSigners", CustomTokenSignersRPC.endpoint(service))
    }

    /// Federated sign-in (federation-and-limits.md §A).
    package mutating func addFederation(service: FederatedSignInService) {
        register("signInWithIdp", SignInWithIdpRPC.endpoint(service))
        register("createAuthUri", CreateAuthUriRPC.endpoint(service.accounts, federation: service))
        register("v1/idpConfigs:testCredential", TestCredentialRPC.endpoint(service))
    }

    /// Provider configuration (federation-and-limits.md §B.2), admin only.
    package mutating func addIdPConfigs(service: IdPConfigService) {
        register("v2/oauthIdpConfigs", IdPConfigsRPC.endpoint(service, .oidc))
        register("v2/defaultSupportedIdpConfigs", IdPConfigsRPC.endpoint(service, .defaultSupported))
        register("v2/defaultSupportedIdps", IdPConfigsRPC.supported())
    }

    /// Phone sign-in (mfa-phone-tenants.md §A) and, for `demo-` projects with the switch on, the
    /// test inbox of codes (§A.7), which needs no credentials, as the emulator's.
    package mutating func addPhone(service: PhoneSignInService, testInbox: Bool) {
        register("sendVerificationCode", SendVerificationCodeRPC.endpoint(service))
        register("signInWithPhoneNumber", SignInWithPhoneNumberRPC.endpoint(service))
        guard testInbox else { return }
        fixed["/emulator/v1/projects/\(service.environment.settings.projectID)/verificationCodes"] = FixedRoute { _, _ in
            let codes = try await service.inboxCodes()
            return WireEncoding.response(
                json: .object([
                    "verificationCodes": .array(
                        codes.map {
                            .object([
                                "phoneNumber": .string($0.phoneNumber), "sessionInfo": .string($0.sessionInfo), "code": .string($0.code),
                            ])
                        })
                ]))
        }
    }

    /// Second factors (mfa-phone-tenants.md §B), in the v2 error shape.
    package mutating func addMFA(service: MFAService, access: AccessPolicy) {
        register("v2/accounts/mfaEnrollment:start", MFARPC.startEnrollment(service))
        register("v2/accounts/mfaEnrollment:finalize", MFARPC.finalizeEnrollment(service, access: access))
        register("v2/accounts/mfaEnrollment:withdraw", MFARPC.withdraw(service))
        register("v2/accounts/mfaSignIn:start", MFARPC.startSignIn(service))
        register("v2/accounts/mfaSignIn:finalize", MFARPC.finalizeSignIn(service))
    }

    /// The project configuration resource (mfa-phone-tenants.md §0.4), admin only.
    package mutating func addProjectConfig(service: ProjectConfigService, settings: ProjectSettings) {
        register("v2/config", ProjectConfigRPC.endpoint(service, settings: settings))
    }

    /// Admin only.
    package mutating func addAdmin(service: AdminService) {
        register("batchGet", BatchGetRPC.endpoint(service))
        register("v3/downloadAccount", LegacyTransferRPC.endpoint(BatchGetRPC.endpoint(service)))
        register("batchDelete", BatchDeleteRPC.endpoint(service))
        register("query", QueryAccountsRPC.endpoint(service))
        register("createSessionCookie", CreateSessionCookieRPC.endpoint(service))
        register("listAuditEvents", OperatorRPCs.audit(service))
        register("listSigningKeys", OperatorRPCs.listKeys(service))
        register("rotateSigningKeys", OperatorRPCs.rotateKeys(service))
        register("getSession", OperatorRPCs.getSession(service))
        register("unlock", UnlockRPC.endpoint(service))
    }

    /// Admin only: `batchCreate` (the hasher checks imported algorithms and their parameters).
    package mutating func addImport(service: AdminService, store: any UserImportStore) {
        let batchCreate = BatchCreateRPC.endpoint(service, store: store)
        register("batchCreate", batchCreate)
        register("v3/uploadAccount", LegacyTransferRPC.endpoint(batchCreate))
    }
}
