import Foundation

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fd00::/8`, or one address), for trusted proxies.
package struct IPNetwork: Sendable, Equatable {
    let bytes: [UInt8]
    let prefixLength: Int

    /// Parses `address` or `address/prefix`; nil when malformed.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = Self.parse(first) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.bytes = bytes
    }

    /// Whether `address` lies in the network.
    package func contains(_ address: String) -> Bool {
        guard let other = Self.parse(address), other.count == bytes.count else { return false }
        var remaining = prefixLength
        for index in bytes.indices where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if bytes[index] & mask != other[index] & mask { return false }
            remaining -= 8
        }
        return true
    }

    /// 4 bytes for IPv4 (dotted quad), 16 for IPv6 (with `::` and an embedded IPv4 tail).
    package static func parse(_ text: String) -> [UInt8]? {
        if !text.contains(":") {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var bytes: [UInt8] = []
            for part in parts {
                guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isNumber), let value = UInt8(part) else { return nil }
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
                    guard let tail = parse(String(piece)) else { return nil }
                    bytes += tail
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
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
