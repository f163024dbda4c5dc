/// Lower-case hexadecimal, two digits per byte: request ids, MACs, checksums, key ids.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The hex spelling of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
