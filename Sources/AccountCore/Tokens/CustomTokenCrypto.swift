import Foundation

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
