package import Foundation

/// What a custom token grants once every check of §C.3 passed.
package struct CustomTokenGrant: Sendable, Equatable {
    /// The user the token signs in (created when absent).
    package var localID: String
    /// The token's `claims`, serialised, overlaid on the session's ID tokens; nil without any.
    package var claimsOverlay: String?
    /// Until when the token could be replayed (`exp` + 300 s): how long its hash is kept.
    package var replayUntil: Date
}

/// The checks of federation-and-limits.md §C.3, in its order; the signature (step 7) is the
/// caller's, between ``parse(_:acceptUnsigned:)`` and ``grant(_:now:)``.
package enum CustomTokenRules {
    /// The audience the Admin SDK puts in every custom token.
    package static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    /// The longest token accepted (§C.3 step 2).
    package static let maximumBytes = 8192
    /// How far in the future `iat` may be, and how long past `exp` a token's hash is kept.
    package static let skewSeconds: TimeInterval = 300
    /// The longest lifetime a token may claim (`exp − iat`).
    package static let maximumLifetimeSeconds: Int64 = 3600

    /// Steps 1–6: present, three segments within 8 KiB, JSON objects, the Identity Toolkit
    /// audience, RS256 (or `none` when unsigned tokens are accepted), a signature when signed.
    package static func parse(_ raw: String?, acceptUnsigned: Bool) throws(AccountError) -> CustomToken {
        guard let raw, !raw.isEmpty else { throw AccountError(.missingCustomToken) }
        let segments = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard raw.utf8.count <= maximumBytes, segments.count == 3 else {
            throw AccountError(.invalidCustomToken, "Invalid assertion format. 3 dot separated segments required.")
        }
        guard let header = object(segments[0]), let payload = object(segments[1]) else { throw AccountError(.invalidCustomToken) }
        guard let audience = payload["aud"]?.stringValue, audience == Self.audience else {
            let named = payload["aud"]?.stringValue.map { String($0.prefix(200)) } ?? ""
            throw AccountError(
                .invalidCustomToken,
                "Invalid aud (audience): \(named). Firebase ID tokens and third-party tokens cannot be used with signInWithCustomToken."
            )
        }
        let algorithm = header["alg"]?.stringValue
        guard algorithm == "RS256" || (algorithm == "none" && acceptUnsigned) else { throw AccountError(.invalidCustomToken) }
        let signature = segments[2]
        if algorithm == "RS256" && signature.isEmpty { throw AccountError(.invalidCustomToken, "Missing signature.") }
        guard let signatureBytes = signature.isEmpty ? [] : Base64URL.decode(String(signature)) else {
            throw AccountError(.invalidCustomToken)
        }
        return CustomToken(
            header: header, payload: payload, signingInput: Array(raw.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count)),
            signature: signatureBytes)
    }

    /// Step 7's first half: the signer the token must be verified against, `iss`, equal to `sub`.
    package static func issuer(of token: CustomToken) throws(AccountError) -> String {
        guard let issuer = token.issuer, !issuer.isEmpty, token.payload["sub"]?.stringValue == issuer else {
            throw AccountError(.invalidCustomToken)
        }
        return issuer
    }

    /// Steps 8–12 on a token whose signature was accepted: its time window, no tenant, its `uid`,
    /// its `claims`.
    package static func grant(_ token: CustomToken, now: Date) throws(AccountError) -> CustomTokenGrant {
        let payload = token.payload
        guard let issuedAt = payload["iat"]?.intValue, let expires = payload["exp"]?.intValue,
            Double(issuedAt) <= now.timeIntervalSince1970 + skewSeconds, Double(expires) > now.timeIntervalSince1970,
            expires - issuedAt <= maximumLifetimeSeconds
        else { throw AccountError(.invalidCustomToken, "Token expired, or issued too far in the future.") }
        if let tenant = payload["tenant_id"], tenant != .string("") { throw AccountError(.tenantIDMismatch) }
        guard let uidValue = payload["uid"] else { throw AccountError(.missingIdentifier) }
        guard let uid = uidValue.stringValue, (1...128).contains(uid.utf8.count),
            uid.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw AccountError(.invalidCustomToken, "uid must be 1-128 printable ASCII characters.") }
        var overlay: String?
        if let claims = payload["claims"], claims != .null {
            guard let object = claims.objectValue else { throw AccountError(.invalidClaims) }
            if let key = object.keys.sorted().first(where: IDTokenClaims.reserved.contains) {
                throw AccountError(.forbiddenClaim, key)
            }
            let serialized = claims.serialized()
            guard serialized.utf8.count <= 1000 else { throw AccountError(.claimsTooLarge) }
            overlay = object.isEmpty ? nil : serialized
        }
        return CustomTokenGrant(
            localID: uid, claimsOverlay: overlay, replayUntil: Date(timeIntervalSince1970: TimeInterval(expires) + skewSeconds))
    }

    private static func object(_ segment: Substring) -> [String: JSONValue]? {
        guard let bytes = Base64URL.decode(String(segment)), let value = try? JSONValue.parse(bytes) else { return nil }
        return value.objectValue
    }
}
