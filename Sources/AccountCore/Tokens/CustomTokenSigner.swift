package import Foundation

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
