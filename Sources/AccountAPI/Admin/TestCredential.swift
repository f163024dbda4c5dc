import AccountCore

/// `POST /v1/projects/{p}/idpConfigs:testCredential {providerId, idToken, nonce?}` (federation-and-limits.md §B.5,
/// `accountctl idp test`), admin only: a provider's token checked as a sign-in would check it, with no account
/// touched. Answers `{claims, trusted, email, emailVerified}` or §A.4's error.
enum TestCredentialRPC {
    static func endpoint(_ service: FederatedSignInService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            guard let providerID = try call.body.nonEmptyString("providerId") else { throw AccountError(.invalidProviderID) }
            let result = try await service.testCredential(
                providerID: providerID, idToken: try call.body.string("idToken"), nonce: try call.body.nonEmptyString("nonce"))
            var fields: [String: JSONValue] = [
                "claims": .object(result.claims), "trusted": .bool(result.trusted), "emailVerified": .bool(result.emailVerified),
            ]
            if let email = result.email { fields["email"] = .string(email) }
            return WireEncoding.response(json: .object(fields))
        }
    }
}
