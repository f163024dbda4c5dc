import AccountCore

/// `accounts:signInWithPhoneNumber` (mfa-phone-tenants.md §A.5): a code or a `temporaryProof` signs
/// in, creates, reauthenticates (`operation: "REAUTH"`) or, with an `idToken`, links.
enum SignInWithPhoneNumberRPC {
    struct Response: Encodable, Sendable {
        var localId: String
        /// Always present, `false` included.
        var isNewUser: Bool
        var phoneNumber: String?
    }

    struct ProofResponse: Encodable, Sendable {
        var phoneNumber: String
        var temporaryProof: String
        var temporaryProofExpiresIn: String
    }

    static func endpoint(_ service: PhoneSignInService) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            let result = try await service.signIn(
                PhoneSignInService.SignInRequest(
                    sessionInfo: try body.string("sessionInfo"), code: try body.string("code"), phoneNumber: try body.string("phoneNumber"),
                    temporaryProof: try body.string("temporaryProof"), idToken: try body.nonEmptyString("idToken"),
                    tenantID: try body.string("tenantId"), reauthentication: try body.string("operation") == "REAUTH",
                    client: AccountService.Client(userAgent: call.userAgent, ipAddress: call.limitedAddress)))
            switch result {
            case .signedIn(let signedIn):
                return try WireEncoding.response(
                    WithTokens(
                        base: Response(
                            localId: signedIn.user.localID, isNewUser: signedIn.isNewUser, phoneNumber: signedIn.user.phoneNumber),
                        tokens: TokenBundleWire(signedIn.tokens, lifetime: service.environment.settings.idTokenLifetimeSeconds)))
            case .temporaryProof(let number, let proof, let expiresIn):
                return try WireEncoding.response(
                    ProofResponse(phoneNumber: number, temporaryProof: proof, temporaryProofExpiresIn: String(expiresIn)))
            }
        }
    }
}
