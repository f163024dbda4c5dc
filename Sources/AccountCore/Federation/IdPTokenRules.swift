package import Foundation

/// The checks of an IdP's ID token that need no key (§A.4 rows 1, 2, 5–9) and the extraction of
/// its assertion; pure.
package enum IdPTokenRules {
    /// The longest token read (row 1).
    package static let maximumBytes = 16 * 1024
    /// Signature algorithms accepted (row 2): never `none`, never a shared secret.
    package static let algorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384"]
    /// How far in the future `iat` may be.
    package static let skewSeconds: Int64 = 60

    package static let unparsable = AccountError(.invalidIDPResponse, "Unable to parse the ID Token.")
    package static let badSignature = AccountError(.invalidIDPResponse, "Unable to verify the ID Token signature.")
    package static let unreachable = AccountError(.invalidIDPResponse, "Error connecting to the given credential's issuer.")

    /// Row 1 (and with `allowBareJSON`, §A.13's bare JSON object of claims).
    package static func parse(_ raw: String, allowBareJSON: Bool = false) throws(AccountError) -> JWS {
        guard raw.utf8.count <= maximumBytes else { throw unparsable }
        if allowBareJSON, raw.first == "{" {
            guard let claims = (try? JSONValue.parse(raw))?.objectValue else { throw unparsable }
            return JWS(header: ["alg": .string("none")], payload: claims, signingInput: [], signature: [])
        }
        let segments = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = object(segments[0]), let payload = object(segments[1]),
            let signature = segments[2].isEmpty ? [] : Base64URL.decode(String(segments[2]))
        else { throw unparsable }
        return JWS(
            header: header, payload: payload, signingInput: Array(raw.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count)),
            signature: signature)
    }

    /// Row 2.
    package static func checkHeader(_ token: JWS) throws(AccountError) {
        guard let algorithm = token.algorithm, algorithms.contains(algorithm), token.header["crit"] == nil, !token.signature.isEmpty else {
            throw badSignature
        }
    }

    /// Rows 5–8 on a token whose signature verified: issuer, audience, time, subject.
    package static func checkClaims(_ token: JWS, config: IdPConfig, now: Date) throws(AccountError) {
        let claims = token.payload
        let issuer = claims["iss"]?.stringValue ?? ""
        guard config.issuers.contains(issuer) else {
            throw AccountError(
                .invalidIDPResponse,
                "The issuer in ID Token \(issuer.prefix(300)) does not match the expected one in config: \(config.primaryIssuer).")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let one)?: audiences = [one]
        case .array(let many)?: audiences = many.compactMap(\.stringValue)
        default: audiences = []
        }
        let accepted = config.audiences
        let azpAccepted = claims["azp"]?.stringValue.map { accepted.contains($0) } ?? true
        guard audiences.contains(where: accepted.contains), azpAccepted else {
            throw AccountError(
                .invalidIDPResponse,
                "The audience in ID Token [\(audiences.joined(separator: ", ").prefix(300))] does not match the expected audience \(config.clientID)."
            )
        }
        try checkTimeAndSubject(claims, now: now)
    }

    /// Rows 7–8.
    package static func checkTimeAndSubject(_ claims: [String: JSONValue], now: Date) throws(AccountError) {
        do {
            let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
            let issuedAt = claims["iat"]?.intValue
            guard let issuedAt, let expires = claims["exp"]?.intValue, issuedAt <= seconds + skewSeconds, expires > seconds,
                expires > issuedAt
            else {
                throw AccountError(.invalidIDPResponse, "ID Token issued at \(issuedAt.map(String.init) ?? "null") is stale to sign-in.")
            }
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.count <= 255 else {
            throw AccountError(
                .invalidIDPResponse,
                "ID Token does not contain user's identity in 'sub' claim: \(JSONValue.object(claims).serialized().prefix(2000))")
        }
    }

    /// Row 9 (§A.4 "Nonce") up to the used-nonce check: the token's `nonce` claim, which makes it
    /// single-use; nil when it has none (then any request nonce is ignored). A request without a
    /// nonce is refused, except for google.com (Google Sign-In on iOS stamps a nonce the app
    /// cannot read).
    package static func nonce(of claims: [String: JSONValue], requestNonce: String?, providerID: String) throws(AccountError) -> String? {
        guard let nonce = claims["nonce"]?.stringValue, !nonce.isEmpty else { return nil }
        if requestNonce?.isEmpty != false && providerID != "google.com" {
            throw AccountError(.missingOrInvalidNonce, "Nonce is missing in the request.")
        }
        return nonce
    }

    /// Row 9's last step, after the duplicate check.
    package static func checkNonceHash(_ nonce: String, requestNonce: String, sha256Hex: (String) -> String) throws(AccountError) {
        guard sha256Hex(requestNonce) == nonce else { throw AccountError(.missingOrInvalidNonce, "Nonce does not match.") }
    }

    /// The claims §A.4 counts as standard; the rest are the sign-in attributes.
    static let standardClaims: Set<String> = [
        "iss", "sub", "aud", "exp", "iat", "nbf", "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "c_hash", "sid", "jti", "email",
        "email_verified", "name", "given_name", "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture",
        "website", "gender", "birthdate", "zoneinfo", "locale", "phone_number", "phone_number_verified", "address", "updated_at", "hd",
        "is_private_email", "real_user_status", "nonce_supported",
    ]

    /// §A.4's extracted assertion from verified claims.
    package static func assertion(_ claims: [String: JSONValue], providerID: String) -> IdPAssertion {
        let email = claims["email"]?.stringValue.flatMap { EmailAddress.normalize($0) }
        let verified = claims["email_verified"] == .bool(true) || claims["email_verified"] == .string("true")
        var assertion = IdPAssertion(
            providerID: providerID, rawID: claims["sub"]?.stringValue ?? "", email: email, emailVerified: verified,
            displayName: claims["name"]?.stringValue, photoURL: claims["picture"]?.stringValue,
            firstName: claims["given_name"]?.stringValue, lastName: claims["family_name"]?.stringValue,
            screenName: claims["screen_name"]?.stringValue, hostedDomain: claims["hd"]?.stringValue)
        if providerID == "google.com" {
            var info: [String: JSONValue] = ["id": .string(assertion.rawID), "locale": .string("en")]
            if let email { info["email"] = .string(email) }
            if claims["email_verified"] != nil { info["verified_email"] = .bool(verified) }
            for (key, value) in [
                ("name", assertion.displayName), ("given_name", assertion.firstName), ("family_name", assertion.lastName),
                ("picture", assertion.photoURL),
            ] {
                if let value { info[key] = .string(value) }
            }
            info["granted_scopes"] = .string(
                "openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile")
            assertion.rawUserInfo = JSONValue.object(info).serialized()
        } else {
            assertion.rawUserInfo = JSONValue.object(claims).serialized()
        }
        let extra = claims.filter { !standardClaims.contains($0.key) }
        assertion.signInAttributes = extra.isEmpty ? nil : JSONValue.object(extra).serialized()
        return assertion
    }

    private static func object(_ segment: Substring) -> [String: JSONValue]? {
        guard let bytes = Base64URL.decode(String(segment)), let value = try? JSONValue.parse(bytes) else { return nil }
        return value.objectValue
    }
}
