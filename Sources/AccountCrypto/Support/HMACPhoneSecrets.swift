import AccountCore
import Crypto

/// Phone sign-in's hashes and MACs (mfa-phone-tenants.md §0.2): SHA-256 of `sessionInfo` and
/// `temporaryProof`; HMAC-SHA256 under the codes key (derived from the key-encryption key) of
/// `sessionInfo` ‖ 0 ‖ `code`, so a stolen table does not give the six-digit codes away.
package struct HMACPhoneSecrets: PhoneSecrets {
    private let key: SymmetricKey

    /// Creates the secrets over 32 secret bytes.
    package init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    package func hash(_ value: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(value.utf8)))
    }

    package func codeMAC(sessionInfo: String, code: String) -> [UInt8] {
        var message = Array(sessionInfo.utf8)
        message.append(0)
        message.append(contentsOf: code.utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }
}
