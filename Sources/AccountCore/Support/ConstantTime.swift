/// Comparisons of secrets without an early exit, so the time taken does not say where the first
/// difference is (bearer tokens, session ids of flows, imported hashes).
package enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes; the time depends only on the longer length.
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    /// The same for two strings' UTF-8.
    package static func equal(_ a: String, _ b: String) -> Bool { equal(Array(a.utf8), Array(b.utf8)) }
}
