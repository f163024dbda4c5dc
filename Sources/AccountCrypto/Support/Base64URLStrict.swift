/// base64url without padding, strict: the decoder takes only the URL alphabet, no padding and no
/// stray trailing bits, so every byte string has exactly one accepted spelling.
enum Base64URLStrict {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output = [UInt8]()
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let byte0 = iterator.next() {
            let byte1 = iterator.next()
            let byte2 = byte1 == nil ? nil : iterator.next()
            output.append(alphabet[Int(byte0 >> 2)])
            output.append(alphabet[Int((byte0 & 0x03) << 4 | (byte1 ?? 0) >> 4)])
            if let byte1 { output.append(alphabet[Int((byte1 & 0x0F) << 2 | (byte2 ?? 0) >> 6)]) }
            if let byte2 { output.append(alphabet[Int(byte2 & 0x3F)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes canonical unpadded base64url; nil for anything else.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(utf8: text.utf8)
    }

    /// Decodes canonical unpadded base64url given as its UTF-8 bytes; nil for anything else.
    static func decode(utf8 characters: some Collection<UInt8>) -> [UInt8]? {
        guard characters.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
