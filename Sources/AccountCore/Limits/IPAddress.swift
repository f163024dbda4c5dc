import Foundation

/// Client addresses as the limits, the trusted-proxy check, the known-network test and stored
/// sessions see them (federation-and-limits.md §E.2, decision 13): one canonical text per address.
package enum IPAddress {
    /// The canonical text of an address: IPv4 dotted quad (also for IPv4-mapped and NAT64
    /// addresses), IPv6 in RFC 5952's form (lower case, the longest zero run as `::`); nil when
    /// `text` is not an address. A zone (`%eth0`) is dropped.
    package static func canonical(_ text: String) -> String? {
        if isCanonicalIPv4(text) { return text }
        return canonicalBytes(text).map(format)
    }

    /// Whether `text` is already a canonical dotted quad (four decimal parts 0–255, no leading
    /// zeros): a TCP peer's address as the socket layer writes it, on every request, so it is
    /// recognised in one pass over its bytes rather than parsed and written again.
    static func isCanonicalIPv4(_ text: String) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0 else { return false }
                parts += 1
                (value, digits) = (0, 0)
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), !(digits == 1 && value == 0) else { return false }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            guard value <= 255 else { return false }
        }
        return parts == 3 && digits > 0
    }

    /// The canonical bytes: 4 for IPv4 and embedded IPv4, else 16.
    package static func canonicalBytes(_ text: String) -> [UInt8]? {
        let bare = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
        let unbracketed = bare.hasPrefix("[") && bare.hasSuffix("]") ? String(bare.dropFirst().dropLast()) : bare
        guard let bytes = parse(unbracketed) else { return nil }
        return embeddedIPv4(bytes) ?? bytes
    }

    /// The IPv4 address an IPv6 one carries when it is IPv4-mapped (`::ffff:0:0/96`) or NAT64's
    /// well-known prefix (`64:ff9b::/96`, RFC 6052); nil otherwise.
    static func embeddedIPv4(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count == 16 else { return nil }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        let nat64 = bytes[0..<4] == [0x00, 0x64, 0xFF, 0x9B] && bytes[4..<12].allSatisfy { $0 == 0 }
        return mapped || nat64 ? Array(bytes[12..<16]) : nil
    }

    /// The text of 4 or 16 bytes.
    static func format(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        // RFC 5952 §4.2: the longest run of two or more zero groups (the first of equals) is `::`.
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index >= 2 { best = (index, end - index) }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }

    /// The key an address counts under in a per-address bucket: IPv4 the address, IPv6 its
    /// network of `ipv6Prefix` bits written `a:b:c:d::/64` (federation-and-limits.md §E.2;
    /// decision 12 keys mail by /56). `address` should be canonical; anything unparsable is its own key.
    package static func networkKey(_ address: String, ipv6Prefix: Int = 64) -> String {
        guard let bytes = canonicalBytes(address) else { return address }
        guard bytes.count == 16 else { return format(bytes) }
        var masked = bytes
        for index in masked.indices {
            let bit = index * 8
            if bit >= ipv6Prefix {
                masked[index] = 0
            } else if bit + 8 > ipv6Prefix {
                masked[index] &= ~(0xFF >> UInt8(ipv6Prefix - bit))
            }
        }
        let groups = stride(from: 0, to: ipv6Prefix, by: 16).map { String(Int(masked[$0 / 8]) << 8 | Int(masked[$0 / 8 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/\(ipv6Prefix)"
    }

    /// 4 bytes for IPv4 (dotted quad), 16 for IPv6 (with `::` and an embedded IPv4 tail).
    package static func parse(_ text: String) -> [UInt8]? {
        if !text.contains(":") {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var bytes: [UInt8] = []
            for part in parts {
                guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt8(part) else {
                    return nil
                }
                bytes.append(value)
            }
            return bytes
        }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard let tail = parse(String(piece)), tail.count == 4 else { return nil }
                    bytes += tail
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let value = UInt16(piece, radix: 16) else {
                    return nil
                }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count < 16 else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
