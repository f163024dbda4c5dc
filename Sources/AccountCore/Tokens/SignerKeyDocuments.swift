import Foundation

/// Documents of keys published at a URL (§C.2 `keysUrl`): a JWKS, or Google's x509 metadata
/// (`{kid: PEM certificate}`), fetched over HTTPS and cached as §B.4's JWKS; AccountIdP implements it.
package protocol SignerKeyDocuments: Sendable {
    /// The JSON object at `url`, from the cache while it is fresh; `refresh` refetches (at most once
    /// a minute per URL). Throws when it cannot be fetched and nothing usable is cached.
    func document(at url: String, refresh: Bool) async throws -> [String: JSONValue]
}
