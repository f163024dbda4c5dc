/// `application/x-www-form-urlencoded`, decoded on the bytes: Foundation's string calls
/// (`replacingOccurrences`, `removingPercentEncoding`) were most of a refresh's body parsing and
/// 5% of a federated sign-in's CPU (its `postBody`).
package enum FormEncoding {
    /// The pairs of `text`, in order; a pair without a name is skipped, a name without `=` has
    /// the value `""`, and a malformed part is what `malformed` makes of it (by default, the text
    /// as it came).
    package static func pairs(
        _ text: Substring.UTF8View, malformed: (Substring.UTF8View) -> String = { String(Substring($0)) }
    ) -> [(name: String, value: String)] {
        text.split(separator: UInt8(ascii: "&")).compactMap { pair in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring.UTF8View) -> String { decoded(part) ?? malformed(part) }
            guard let name = parts.first.map(decode), !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// One name or value, or the text as it came when it is malformed (as Foundation's
    /// `removingPercentEncoding` returning nil left it).
    package static func decode(_ encoded: Substring.UTF8View) -> String {
        decoded(encoded) ?? String(Substring(encoded))
    }

    /// One name or value: `+` is a space and `%XX` a byte; nil for a malformed escape or bytes that
    /// are not UTF-8, each caller keeping its own fallback.
    package static func decoded(_ encoded: Substring.UTF8View) -> String? {
        guard encoded.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(Substring(encoded))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index != encoded.endIndex {
            let byte = encoded[index]
            index = encoded.index(after: index)
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != encoded.endIndex, let high = Hex.value(encoded[index]) else { return nil }
                index = encoded.index(after: index)
                guard index != encoded.endIndex, let low = Hex.value(encoded[index]) else { return nil }
                index = encoded.index(after: index)
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
