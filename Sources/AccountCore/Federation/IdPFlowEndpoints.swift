import Foundation

/// The IdP's endpoints a redirect flow uses (§A.5); AccountIdP implements it over HTTPS.
package protocol IdPFlowEndpoints: Sendable {
    /// Where the browser is sent (`authorization_endpoint`).
    func authorizationEndpoint(_ config: IdPConfig) async throws -> String
    /// POSTs the token endpoint with `form`; the JSON answer. Unreachable, 5xx or slow:
    /// `INVALID_IDP_RESPONSE : Error connecting…`; 4xx: `… The authorization code was rejected.`
    func exchangeCode(_ config: IdPConfig, form: [(String, String)]) async throws -> [String: JSONValue]
}
