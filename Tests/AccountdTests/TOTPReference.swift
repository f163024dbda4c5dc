import Crypto
import Foundation

/// What an authenticator app computes, written from the RFCs for the tests alone and independent of
/// the service's own HOTP and base32 code (mfa-phone-tenants.md §B.11): HOTP (RFC 4226 §5.3) with
/// HMAC-SHA1, TOTP (RFC 6238 §4, T0 = 0) and the base32 alphabet of RFC 4648 §6.
enum TOTPReference {
    /// Seconds per step: RFC 6238's X, and the `periodSec` the service announces.
    static let period: Int64 = 30

    /// HOTP(K, C) truncated to `digits` decimal digits.
    static func hotp(secret: [UInt8], counter: UInt64, digits: Int = 6) -> String {
        // The counter as eight big-endian bytes.
        let message = (0..<8).map { index in UInt8((counter >> UInt64(8 * (7 - index))) & 0xff) }
        let hash = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        // Dynamic truncation: the low four bits of the last byte choose four bytes; the top bit is dropped.
        let offset = Int(hash[hash.count - 1] & 0x0f)
        var binary: UInt64 = 0
        for byte in hash[offset..<(offset + 4)] { binary = (binary << 8) | UInt64(byte) }
        binary &= 0x7fff_ffff
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        return pad(binary % modulus, digits)
    }

    /// The step `date` falls in.
    static func step(at date: Date, period: Int64 = TOTPReference.period) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down)) / period
    }

    /// The code of step `step`.
    static func code(secret: [UInt8], step: Int64, digits: Int = 6) -> String {
        hotp(secret: secret, counter: UInt64(step), digits: digits)
    }

    /// The code an app shows at `date`.
    static func code(secret: [UInt8], at date: Date, period: Int64 = TOTPReference.period, digits: Int = 6) -> String {
        code(secret: secret, step: step(at: date, period: period), digits: digits)
    }

    /// Whether the six-digit codes of `steps` are pairwise different: with such a secret no refusal
    /// or acceptance among those steps can be a chance collision of two steps' codes.
    static func distinct(secret: [UInt8], steps: ClosedRange<Int64>) -> Bool {
        let codes = steps.map { code(secret: secret, step: $0) }
        return Set(codes).count == codes.count
    }

    /// A six-digit code that is no code of the steps within `window` of `step`: a guess that is
    /// wrong for certain; `index` picks different ones.
    static func wrongCode(secret: [UInt8], near step: Int64, window: Int64 = 10, index: Int = 0) -> String {
        let near = Set(((step - window)...(step + window)).map { code(secret: secret, step: $0) })
        var candidate = UInt64((index * 104_729 + 314_159) % 1_000_000)
        while near.contains(pad(candidate, 6)) { candidate = (candidate + 1) % 1_000_000 }
        return pad(candidate, 6)
    }

    /// RFC 4648 base32, upper or lower case, with or without `=` padding; nil for any other character.
    static func base32Decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var output: [UInt8] = []
        var buffer: UInt64 = 0
        var bits: UInt64 = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> bits) & 0xff))
                buffer &= (1 << bits) - 1
            }
        }
        return output
    }

    /// `value` in decimal, left-padded with zeros to `digits`.
    static func pad(_ value: UInt64, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
