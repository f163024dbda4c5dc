import Foundation

/// Seals secrets at rest (AES-256-GCM under the key-encryption key, bound to `context`);
/// AccountCrypto's `KeySealer` implements it.
package protocol SecretSealing: Sendable {
    /// Names the key-encryption key, stored beside what it sealed.
    var kekID: String { get }
    /// `plaintext` sealed; opening needs the same `context`.
    func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8]
    /// What ``seal(_:context:)`` sealed under `context`.
    func open(_ sealed: [UInt8], context: String) throws -> [UInt8]
}
