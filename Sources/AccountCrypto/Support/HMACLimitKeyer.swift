import AccountCore
import Crypto
import Foundation

/// The abuse limiter's keys (federation-and-limits.md §E.2): HMAC-SHA256 under a key derived from
/// the key-encryption key, over the bucket's name and the value, so the limiter's tables hold no
/// address or email in plain text and cannot be reversed without the key.
package struct HMACLimitKeyer: LimitKeyer {
    let key: SymmetricKey

    /// Creates a keyer over 32 secret bytes.
    package init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    package func key(_ bucket: String, _ value: String) -> [UInt8] {
        var message = Array(bucket.utf8)
        message.append(0)
        message.append(contentsOf: value.utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }
}
