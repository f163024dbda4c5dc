package import AccountCore
import HTTPTypes

/// The public keys (identity-toolkit.md §4.19): JWKS, and the `{kid: certificate}` map the Admin SDK and
/// google-auth fetch. No auth; cacheable for an hour.
extension APIRoutes {
    struct JWK: Encodable, Sendable {
        var kty = "RSA"
        var alg = "RS256"
        var use = "sig"
        var kid: String
        var n: String
        var e: String
    }

    struct JWKS: Encodable, Sendable {
        var keys: [JWK]
    }

    /// Adds the key routes and their aliases.
    package mutating func addKeys(signer: any TokenSigner) {
        let cache: HTTPFields = [.cacheControl: "public, max-age=3600"]
        let jwks = FixedRoute { _, _ in
            let keys = try await signer.publishedKeys()
            return try WireEncoding.response(JWKS(keys: keys.map { JWK(kid: $0.kid, n: $0.modulus, e: $0.exponent) }), headers: cache)
        }
        let certificates = FixedRoute { _, _ in
            let keys = try await signer.publishedKeys()
            return try WireEncoding.response(Dictionary(uniqueKeysWithValues: keys.map { ($0.kid, $0.certificatePEM) }), headers: cache)
        }
        fixed["/.well-known/jwks.json"] = jwks
        fixed["/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"] = jwks
        fixed["/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"] = certificates
        fixed["/identitytoolkit/v3/relyingparty/publicKeys"] = certificates
    }
}
