import AccountCore

/// base64url without padding, strict: the decoder takes only the URL alphabet, no padding and no
/// stray trailing bits, so every byte string has exactly one accepted spelling.
enum Base64URLStrict {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    /// Encodes bytes: the one unpadded encoding, ``Base64URL/encode(_:)``.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64URL.encode(bytes)
    }

    /// Decodes canonical unpadded base64url; nil for anything else.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(utf8: text.utf8)
    }

    /// Decodes canonical unpadded base64url given as its UTF-8 bytes; nil for anything else.
    static func decode(utf8 characters: some Collection<UInt8>) -> [UInt8]? {
        if let decoded = characters.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(characters).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// The loop over raw bytes: the table read once, not through its lazy global per character,
    /// and no bounds checks (an ID token's payload is most of a kilobyte).
    private static func decode(buffer characters: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard characters.count % 4 != 1 else { return nil }
        var valid = true
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        let output = values.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: characters.count * 3 / 4) { output, written in
                written = 0
                for character in characters {
                    let value = table[Int(character)]
                    guard value != 0xFF else {
                        valid = false
                        return
                    }
                    accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[written] = UInt8(truncatingIfNeeded: accumulator >> bits)
                        written += 1
                    }
                }
            }
        }
        guard valid, accumulator & ((1 << bits) - 1) == 0 else { return nil }
        return output
    }
}
