package import Foundation
import NIOCore

/// Rows in `COPY … FROM STDIN`'s text format (tab-separated, `\N` for NULL, backslash escapes),
/// for the import's clean batches: PostgreSQL then parses no JSON and no base64 for them, the
/// larger part of an import's database time when the rows came as `json_to_recordset`.
///
/// Instants are written as ``StoreTransaction/insertUsers(_:ifAbsent:)``'s `to_timestamp` stores
/// them, rounded to the microsecond the same way, so an account imported either way reads back
/// alike. Text form covers years 1 to 9999; an instant outside them makes ``timestamp(_:)``
/// answer false, and the caller writes the batch the other way (where PostgreSQL decides).
package struct CopyText {
    private(set) var buffer: ByteBuffer
    private var rowStarted = false

    init(capacity: Int = 64 * 1024) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// Text, escaped; nil is NULL.
    mutating func text(_ value: String?) {
        separate()
        guard var utf8 = value else { return null() }
        utf8.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() {
                let escape: UInt8
                switch byte {
                case UInt8(ascii: "\\"): escape = UInt8(ascii: "\\")
                case UInt8(ascii: "\t"): escape = UInt8(ascii: "t")
                case UInt8(ascii: "\n"): escape = UInt8(ascii: "n")
                case UInt8(ascii: "\r"): escape = UInt8(ascii: "r")
                default: continue
                }
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                buffer.writeInteger(UInt8(ascii: "\\"))
                buffer.writeInteger(escape)
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
        }
    }

    mutating func bool(_ value: Bool) {
        separate()
        buffer.writeInteger(value ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

    mutating func int(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
    }

    /// `bytea` in hex form (`\x…`, its backslash escaped for the text format); nil is NULL.
    mutating func bytes(_ value: [UInt8]?) {
        separate()
        guard let value else { return null() }
        buffer.writeStaticString("\\\\x")
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { hex in
            for byte in value {
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0F)])
            }
        }
    }

    /// A `timestamptz` in UTC, microseconds as `to_timestamp(float8)` rounds them; nil is NULL.
    /// False (and nothing written that counts: the caller drops this buffer) outside years 1–9999.
    mutating func timestamp(_ value: Date?) -> Bool {
        separate()
        guard let value else {
            null()
            return true
        }
        guard let text = Self.utc(value) else { return false }
        buffer.writeString(text)
        return true
    }

    mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        rowStarted = false
    }

    private mutating func separate() {
        if rowStarted { buffer.writeInteger(UInt8(ascii: "\t")) }
        rowStarted = true
    }

    private mutating func null() {
        buffer.writeStaticString("\\N")
    }

    /// PostgreSQL's `float8_timestamptz`: seconds moved to its epoch (2000-01-01), times 10⁶,
    /// rounded half to even (`rint`). Then the civil date (Hinnant's days-to-civil) and time.
    package static func utc(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return nil }
        let postgresEpoch = 946_684_800.0
        let scaled = ((seconds - postgresEpoch) * 1_000_000).rounded(.toNearestOrEven)
        // Years 1–9999 lie well inside ±3.2e17 µs.
        guard abs(scaled) < 3.2e17 else { return nil }
        let micros = Int64(scaled) + 946_684_800_000_000
        let (dayCount, inDay) = micros.quotientAndRemainder(dividingBy: 86_400_000_000)
        let (days, dayMicros) = inDay < 0 ? (dayCount - 1, inDay + 86_400_000_000) : (dayCount, inDay)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        guard (1...9999).contains(year) else { return nil }
        let (secondsOfDay, fraction) = dayMicros.quotientAndRemainder(dividingBy: 1_000_000)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(secondsOfDay / 3600, 2)):\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2)).\(pad(fraction, 6))+00"
    }
}
