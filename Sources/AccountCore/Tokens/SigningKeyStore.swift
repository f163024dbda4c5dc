package import Foundation

/// A signing key as stored: public parts in the clear, the private key sealed under the
/// key-encryption key. The store never sees a private key in the clear.
package struct SigningKeyRecord: Sendable, Equatable {
    /// Life cycle of identity-toolkit.md §3.6: published before signing, published after retiring.
    package enum State: String, Sendable {
        case next, current, retired
    }

    package var kid: String
    package var publicKeyDER: [UInt8]
    package var certificatePEM: String
    /// AES-GCM sealed box (nonce ‖ ciphertext ‖ tag) of the private key's DER.
    package var sealedPrivateKey: [UInt8]
    /// Which key-encryption key sealed it.
    package var kekID: String
    package var state: State
    package var createdAt: Date
    package var activatedAt: Date?
    package var retiredAt: Date?
    /// After this instant the key is no longer published.
    package var removeAfter: Date?

    /// Creates a record.
    package init(
        kid: String, publicKeyDER: [UInt8], certificatePEM: String, sealedPrivateKey: [UInt8], kekID: String,
        state: State, createdAt: Date, activatedAt: Date? = nil, retiredAt: Date? = nil, removeAfter: Date? = nil
    ) {
        self.kid = kid
        self.publicKeyDER = publicKeyDER
        self.certificatePEM = certificatePEM
        self.sealedPrivateKey = sealedPrivateKey
        self.kekID = kekID
        self.state = state
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
        self.removeAfter = removeAfter
    }
}

/// Where signing keys live (PostgreSQL), shared by every replica.
package protocol SigningKeyStore: Sendable {
    /// Every key not yet past `removeAfter` at `now`.
    func publishedKeys(at now: Date) async throws -> [SigningKeyRecord]
    /// Adds a key. Adding a `current` key when one exists throws `SigningKeyConflict` (another
    /// replica won the race; reload).
    func insert(_ key: SigningKeyRecord) async throws
    /// In one transaction: the current key becomes retired (removed from publication at
    /// `removeAfter`), and `kid` (a `next` key) becomes current.
    func promote(kid: String, at now: Date, retiredRemoveAfter: Date) async throws
}

/// Another replica created the current key first.
package struct SigningKeyConflict: Error {
    /// Creates the error.
    package init() {}
}
