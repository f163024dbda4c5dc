import Foundation

/// Signs and verifies the service's JWTs (ID tokens, session cookies): RS256 with the one current
/// signing key, verification with every published key (identity-toolkit.md §3.6).
package protocol TokenSigner: Sendable {
    /// Signs `claims` as a compact JWT with header `{"alg":"RS256","kid":…,"typ":"JWT"}`.
    func sign(claims: [String: JSONValue]) async throws -> String

    /// Checks the JWT's form, `alg` RS256, a published `kid` and the signature, and returns the
    /// payload. Any failure is `AccountError(.invalidIDToken)`; claims are not judged here.
    func verify(_ token: String) async throws -> [String: JSONValue]

    /// Every published public key (next, current, retired until removal).
    func publishedKeys() async throws -> [PublishedKey]
}

/// A public key as the key routes publish it.
package struct PublishedKey: Sendable, Equatable {
    /// base64url of the first 16 bytes of SHA-256 over the DER public key.
    package var kid: String
    /// RSA modulus, base64url without padding (JWK `n`).
    package var modulus: String
    /// RSA public exponent, base64url without padding (JWK `e`).
    package var exponent: String
    /// A self-signed X.509 certificate for the key, PEM.
    package var certificatePEM: String

    /// Creates a published key.
    package init(kid: String, modulus: String, exponent: String, certificatePEM: String) {
        self.kid = kid
        self.modulus = modulus
        self.exponent = exponent
        self.certificatePEM = certificatePEM
    }
}
