package import Foundation

/// A rate bucket (GCRA): `burst` requests at once, then one every `period` seconds.
package struct RateBucket: Sendable, Equatable {
    package var burst: Int
    package var period: TimeInterval

    /// Creates a bucket.
    package init(burst: Int, period: TimeInterval) {
        self.burst = max(1, burst)
        self.period = period
    }

    /// How far ahead of now the theoretical arrival time may run before a request is refused.
    package var tolerance: TimeInterval { period * Double(burst - 1) }

    /// `<burst>/<period>` with the period as `30s`, `12m`, `1h` or `1d` (or plain seconds); nil
    /// when malformed. `0` is handled by the caller (the bucket is off).
    package static func parse(_ text: String) -> RateBucket? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let burst = Int(parts[0]), burst >= 1 else { return nil }
        var period = String(parts[1])
        var unit: TimeInterval = 1
        if let last = period.last, let scale = ["s": 1.0, "m": 60, "h": 3600, "d": 86400][String(last)] {
            unit = scale
            period.removeLast()
        }
        guard let count = Double(period.isEmpty ? "1" : period), count > 0 else { return nil }
        return RateBucket(burst: burst, period: count * unit)
    }
}
