import Foundation

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fd00::/8`, or one address), for trusted proxies.
/// IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`) addresses are their IPv4 address
/// on either side (federation-and-limits.md decision 13): a dual-stack listener sees IPv4 peers
/// that way, and `127.0.0.1/32` must still name the proxy on loopback.
package struct IPNetwork: Sendable, Equatable {
    let bytes: [UInt8]
    let prefixLength: Int

    /// Parses `address` or `address/prefix`; nil when malformed. A mapped network
    /// (`::ffff:10.0.0.0/104`) is the IPv4 network it maps (`10.0.0.0/8`).
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let raw = IPAddress.parse(first) else { return nil }
        var length = raw.count * 8
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...length).contains(given) else { return nil }
            length = given
        }
        if let embedded = IPAddress.embeddedIPv4(raw) {
            // A network inside the mapped /96 is the IPv4 network of its last 32 bits.
            guard length >= 96 else {
                bytes = raw
                prefixLength = length
                return
            }
            bytes = embedded
            prefixLength = length - 96
        } else {
            bytes = raw
            prefixLength = length
        }
    }

    /// Whether `address` lies in the network (compared as its canonical form, so a mapped IPv4
    /// address is in an IPv4 network).
    package func contains(_ address: String) -> Bool {
        guard let other = IPAddress.canonicalBytes(address), other.count == bytes.count else { return false }
        var remaining = prefixLength
        for index in bytes.indices where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if bytes[index] & mask != other[index] & mask { return false }
            remaining -= 8
        }
        return true
    }

    /// 4 bytes for IPv4 (dotted quad), 16 for IPv6, as written (no mapping undone).
    package static func parse(_ text: String) -> [UInt8]? { IPAddress.parse(text) }

    /// Whether the network holds every address of its family (`0.0.0.0/0`, `::/0`, or a mapped
    /// prefix that is all of IPv4): as a trusted proxy it lets any client name itself.
    package var coversEverything: Bool { prefixLength == 0 }
}
