import AccountCore
import Crypto

/// HOTP (RFC 4226 §5.3): HMAC-SHA1 of the big-endian counter, dynamic truncation, six digits.
/// SHA-1 is what authenticator apps compute for TOTP; HMAC-SHA1 remains sound for this use.
package struct HMACSHA1HOTP: HOTPGenerator {
    package init() {}

    package func code(secret: [UInt8], counter: UInt64) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { message[index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let value = binary % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}
