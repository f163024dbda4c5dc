package import Foundation

/// A custom token as the Admin SDK mints it (federation-and-limits.md §C.1), taken apart but not
/// yet trusted.
package struct CustomToken: Sendable {
    /// The JOSE header.
    package var header: [String: JSONValue]
    /// The claims.
    package var payload: [String: JSONValue]
    /// `header.payload` as sent: what the signature covers.
    package var signingInput: [UInt8]
    /// The decoded third segment (empty for an unsigned token).
    package var signature: [UInt8]

    /// Whether the token says it is unsigned (`alg: none`, the Admin SDK's emulator mode).
    package var isUnsigned: Bool { header["alg"]?.stringValue == "none" }
    /// The signer the token names (`iss`, which must equal `sub`).
    package var issuer: String? { payload["iss"]?.stringValue }
    /// The key the token names (`kid`), when it names one.
    package var keyID: String? { header["kid"]?.stringValue }
}

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

/// A public key registered to verify one service account's custom tokens (§C.2).
package struct CustomTokenSigner: Sendable, Equatable {
    package var signerID: String
    /// The project the key signs for.
    package var project: String
    /// The service account (`iss` of its tokens).
    package var email: String
    /// The key's id (`kid` of its tokens), when registered with one.
    package var keyID: String?
    /// The RSA public key, DER SubjectPublicKeyInfo.
    package var spki: [UInt8]
    /// `publicKeyPem`, `x509Certificate`, `jwks` or `keysUrl`.
    package var source: String
    /// Where a `keysUrl` signer's keys are published (its `spki` is empty).
    package var keysURL: String?
    package var createdAt: Date

    /// Creates a signer.
    package init(
        signerID: String, project: String, email: String, keyID: String?, spki: [UInt8], source: String, keysURL: String? = nil,
        createdAt: Date
    ) {
        self.signerID = signerID
        self.project = project
        self.email = email
        self.keyID = keyID
        self.spki = spki
        self.source = source
        self.keysURL = keysURL
        self.createdAt = createdAt
    }

    /// What its fingerprint is the SHA-256 of: the key, or the URL of a `keysUrl` signer.
    package var fingerprintInput: [UInt8] { keysURL.map { Array($0.utf8) } ?? spki }
}

/// A key as read from a registration, before it is stored.
package struct SignerKey: Sendable, Equatable {
    /// The key's id, from the request's `keyId` or the JWKS entry's `kid`.
    package var keyID: String?
    /// DER SubjectPublicKeyInfo of an RSA key of at least 2048 bits.
    package var spki: [UInt8]

    /// Creates a key.
    package init(keyID: String?, spki: [UInt8]) {
        self.keyID = keyID
        self.spki = spki
    }
}

/// The cryptography custom tokens need; AccountCrypto implements it.
package protocol CustomTokenCrypto: Sendable {
    /// Whether `signature` is an RS256 (RSASSA-PKCS1-v1_5, SHA-256) signature of `signingInput` by
    /// the key `spki`.
    func verifyRS256(signature: [UInt8], signingInput: [UInt8], spki: [UInt8]) -> Bool
    /// SHA-256 of `bytes`.
    func sha256(_ bytes: [UInt8]) -> [UInt8]
    /// The RSA keys of a registration: exactly one of a PEM public key, a PEM X.509 certificate or a
    /// JWKS document. Throws `INVALID_CONFIG` naming what is wrong (not RSA, under 2048 bits, …).
    func signerKeys(publicKeyPEM: String?, certificatePEM: String?, jwks: String?) throws -> [SignerKey]
}

/// Documents of keys published at a URL (§C.2 `keysUrl`): a JWKS, or Google's x509 metadata
/// (`{kid: PEM certificate}`), fetched over HTTPS and cached as §B.4's JWKS; AccountIdP implements it.
package protocol SignerKeyDocuments: Sendable {
    /// The JSON object at `url`, from the cache while it is fresh; `refresh` refetches (at most once
    /// a minute per URL). Throws when it cannot be fetched and nothing usable is cached.
    func document(at url: String, refresh: Bool) async throws -> [String: JSONValue]
}

/// The custom-token signers and the used tokens; the PostgreSQL adapter implements it.
package protocol CustomTokenSignerStore: Sendable {
    /// Every key registered for `email`, in any project this database serves.
    func signers(email: String) async throws -> [CustomTokenSigner]
    /// The keys of `project`, oldest first.
    func signers(project: String) async throws -> [CustomTokenSigner]
    /// Registers `signers` (one per key of a registration) in one transaction; `CONFIGURATION_EXISTS`
    /// when the project already has one of the keys.
    func addSigners(_ signers: [CustomTokenSigner]) async throws
    /// Removes a signer of `project`; false when there is none with that id.
    func removeSigner(project: String, signerID: String) async throws -> Bool
}
