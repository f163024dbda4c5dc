import AccountCore
import Crypto
import Foundation

/// Seals signing keys' private halves under the key-encryption key (KEK) from configuration:
/// AES-256-GCM with a subkey derived by HKDF-SHA256, so the database never holds a private key in
/// the clear and the KEK itself encrypts nothing.
package struct KeySealer: SecretSealing {
    /// Names the KEK without revealing it: hex of the first 8 bytes of SHA-256 over a KEK-derived
    /// value. Stored beside each sealed key.
    package let kekID: String
    private let keyEncryptionKey: SymmetricKey
    private let sealingKey: SymmetricKey

    /// The sealed box was tampered with, or sealed under another KEK.
    package struct OpenFailed: Error {}

    /// Creates a sealer from the 32-byte key-encryption key.
    package init(keyEncryptionKey: [UInt8]) {
        precondition(keyEncryptionKey.count == 32, "the key-encryption key must be 32 bytes")
        self.keyEncryptionKey = SymmetricKey(data: keyEncryptionKey)
        self.sealingKey = Self.derive(from: self.keyEncryptionKey, info: "accountd signing-key sealing v1", count: 32)
        let identifier = Self.derive(from: self.keyEncryptionKey, info: "accountd kek id v1", count: 32)
        let digest = identifier.withUnsafeBytes { SHA256.hash(data: $0) }
        self.kekID = Hex.encode(digest.prefix(8))
    }

    /// AES-GCM seals `plaintext` under a fresh random nonce: nonce ‖ ciphertext ‖ tag.
    package func seal(_ plaintext: [UInt8]) throws -> [UInt8] {
        // `combined` is nil only for nonces of a non-standard size; the default nonce is 12 bytes.
        Array(try AES.GCM.seal(plaintext, using: sealingKey).combined!)
    }

    /// Opens what ``seal(_:)`` made; throws ``OpenFailed`` if it was altered or sealed under another KEK.
    package func open(_ sealed: [UInt8]) throws -> [UInt8] {
        do {
            return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: sealingKey))
        } catch {
            throw OpenFailed()
        }
    }

    /// AES-GCM seals `plaintext` with `context` as additional authenticated data: opened under
    /// another context (another project, provider or field), it fails.
    package func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        Array(try AES.GCM.seal(plaintext, using: sealingKey, authenticating: Array(context.utf8)).combined!)
    }

    /// Opens what ``seal(_:context:)`` made under the same `context`.
    package func open(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        do {
            return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: sealingKey, authenticating: Array(context.utf8)))
        } catch {
            throw OpenFailed()
        }
    }

    /// `count` bytes derived from the KEK by HKDF-SHA256 (no salt) with `info`, for other subkeys.
    package func derive(info: String, count: Int) -> [UInt8] {
        Self.derive(from: keyEncryptionKey, info: info, count: count).withUnsafeBytes { Array($0) }
    }

    private static func derive(from key: SymmetricKey, info: String, count: Int) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array(info.utf8), outputByteCount: count)
    }
}
