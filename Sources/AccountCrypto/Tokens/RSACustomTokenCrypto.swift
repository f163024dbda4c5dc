package import AccountCore
import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// RS256 verification of custom tokens and the reading of signer keys (federation-and-limits.md
/// §C.2, §C.3 step 7) with swift-crypto and swift-certificates.
package struct RSACustomTokenCrypto: CustomTokenCrypto {
    /// Creates the implementation.
    package init() {}

    package func verifyRS256(signature: [UInt8], signingInput: [UInt8], spki: [UInt8]) -> Bool {
        guard let key = try? _RSA.Signing.PublicKey(derRepresentation: spki) else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
    }

    package func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    package func signerKeys(publicKeyPEM: String?, certificatePEM: String?, jwks: String?) throws -> [SignerKey] {
        if let publicKeyPEM {
            return [
                SignerKey(
                    keyID: nil, spki: try Self.spki(try Self.rsa { try _RSA.Signing.PublicKey(unsafePEMRepresentation: publicKeyPEM) }))
            ]
        }
        if let certificatePEM {
            let certificate: Certificate
            do {
                certificate = try Certificate(pemEncoded: certificatePEM)
            } catch {
                throw AccountError(.invalidConfig, "x509Certificate is not a PEM certificate.")
            }
            guard let key = _RSA.Signing.PublicKey(certificate.publicKey) else {
                throw AccountError(.invalidConfig, "The certificate's key is not an RSA key.")
            }
            return [SignerKey(keyID: nil, spki: try Self.spki(key))]
        }
        if let jwks {
            guard let document = (try? JSONValue.parse(jwks))?.objectValue, case .array(let entries)? = document["keys"], !entries.isEmpty
            else { throw AccountError(.invalidConfig, "jwks must be a JSON Web Key Set with at least one key.") }
            return try entries.map { entry in
                guard let key = entry.objectValue, key["kty"]?.stringValue == "RSA",
                    let n = key["n"]?.stringValue.flatMap(Base64URL.decode), let e = key["e"]?.stringValue.flatMap(Base64URL.decode)
                else { throw AccountError(.invalidConfig, "Every key of jwks must be an RSA key with n and e.") }
                let publicKey = try Self.rsa { try _RSA.Signing.PublicKey(n: n, e: e) }
                return SignerKey(keyID: key["kid"]?.stringValue, spki: try Self.spki(publicKey))
            }
        }
        throw AccountError(.invalidConfig, "Give exactly one of publicKeyPem, x509Certificate, jwks.")
    }

    /// A key read leniently (so a short one is named, not just refused), or `INVALID_CONFIG`.
    private static func rsa(_ read: () throws -> _RSA.Signing.PublicKey) throws -> _RSA.Signing.PublicKey {
        do {
            return try read()
        } catch {
            throw AccountError(.invalidConfig, "The key is not an RSA public key (PEM SubjectPublicKeyInfo).")
        }
    }

    /// The key's SubjectPublicKeyInfo, when it has at least 2048 bits.
    private static func spki(_ key: _RSA.Signing.PublicKey) throws -> [UInt8] {
        guard key.keySizeInBits >= 2048 else {
            throw AccountError(.invalidConfig, "RSA keys must have at least 2048 bits; this one has \(key.keySizeInBits).")
        }
        return Array(key.derRepresentation)
    }
}
