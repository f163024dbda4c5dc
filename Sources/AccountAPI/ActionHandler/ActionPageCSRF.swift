import AccountCore
import Crypto

/// The CSRF token of the action page's forms: HMAC-SHA256 of the purpose and the value the form
/// acts on (the oob code, or the address a reset is sent to) under a server key, so a token is
/// bound to that one code and cannot be minted by another site.
package struct ActionPageCSRF: Sendable {
    private let key: [UInt8]

    /// A token signer under `key` (at least 32 bytes, derived from the server's key-encryption key).
    package init(key: [UInt8]) {
        precondition(key.count >= 16, "the CSRF key must hold at least 16 bytes")
        self.key = key
    }

    /// The token for `value` used for `purpose` (base64url).
    package func token(purpose: String, value: String) -> String {
        Base64URL.encode(Self.hmacSHA256(key: key, message: Array("accountd-action-page\u{0}\(purpose)\u{0}\(value)".utf8)))
    }

    /// Whether `token` is the token for `value` and `purpose`, compared in constant time.
    package func verify(_ token: String?, purpose: String, value: String) -> Bool {
        guard let token else { return false }
        let expected = Array(self.token(purpose: purpose, value: value).utf8)
        let given = Array(token.utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    /// HMAC-SHA256 (swift-crypto).
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// SHA-256 (swift-crypto).
    package static func sha256(_ message: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: message))
    }
}
