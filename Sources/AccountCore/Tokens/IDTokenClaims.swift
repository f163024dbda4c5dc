/// The claims of an ID token (identity-toolkit.md §3.1), rebuilt from the account at every mint.
package enum IDTokenClaims {
    /// Claims an ID token may not carry as custom claims (§2.5).
    package static let reserved: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub", "sid",
    ]

    /// The payload for `user`'s session `sessionID` minted with `ticket`: the account's custom
    /// claims, a custom-token session's `overlay` on top (federation-and-limits.md §C.4), then
    /// the claims the account owns.
    package static func make(
        user: UserRecord, sessionID: String, signInProvider: String, ticket: MintTicket, settings: ProjectSettings,
        overlay: String? = nil, signInAttributes: String? = nil, secondFactor: SecondFactorClaim? = nil
    ) -> [String: JSONValue] {
        var claims = user.customClaims
        if let overlay, let object = (try? JSONValue.parse(overlay))?.objectValue {
            claims.merge(object) { _, session in session }
        }
        claims["iss"] = .string(settings.issuer)
        claims["aud"] = .string(settings.projectID)
        claims["sub"] = .string(user.localID)
        claims["user_id"] = .string(user.localID)
        claims["iat"] = .int(ticket.issuedAt)
        claims["exp"] = .int(ticket.issuedAt + settings.idTokenLifetimeSeconds)
        claims["auth_time"] = .int(ticket.authTime)
        claims["sid"] = .string(sessionID)
        var identities: [String: JSONValue] = [:]
        for key in ["email", "email_verified", "phone_number", "name", "picture", "provider_id"] {
            claims.removeValue(forKey: key)
        }
        if let email = user.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(user.emailVerified)
            identities["email"] = .array([.string(email)])
        }
        if let phone = user.phoneNumber {
            claims["phone_number"] = .string(phone)
            identities["phone"] = .array([.string(phone)])
        }
        if let name = user.displayName { claims["name"] = .string(name) }
        if let picture = user.photoURL { claims["picture"] = .string(picture) }
        for link in user.federated { identities[link.providerID] = .array([.string(link.rawID)]) }
        if signInProvider == "anonymous" {
            claims["provider_id"] = .string("anonymous")
            identities = [:]
        }
        var firebase: [String: JSONValue] = ["identities": .object(identities), "sign_in_provider": .string(signInProvider)]
        if let signInAttributes, let object = (try? JSONValue.parse(signInAttributes))?.objectValue, !object.isEmpty {
            firebase["sign_in_attributes"] = .object(object)
        }
        if let secondFactor {
            firebase["sign_in_second_factor"] = .string(secondFactor.kind.claim)
            firebase["second_factor_identifier"] = .string(secondFactor.enrollmentID)
        }
        claims["firebase"] = .object(firebase)
        return claims
    }
}
