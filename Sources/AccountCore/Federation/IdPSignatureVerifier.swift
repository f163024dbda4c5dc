import Foundation

/// Verifies an ID token's signature with its issuer's keys (federation-and-limits.md §A.4 rows 3
/// and 4: keys obtainable, `kid` known after at most one forced refetch, signature valid), or
/// throws their `INVALID_IDP_RESPONSE`. AccountIdP implements it over HTTPS.
package protocol IdPSignatureVerifier: Sendable {
    func verifySignature(_ token: JWS, config: IdPConfig) async throws
}
