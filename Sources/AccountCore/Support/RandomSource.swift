/// The randomness every identifier and secret comes from. Injected so tests can be repeatable
/// where they need to be; production uses the system's CSPRNG.
package protocol RandomSource: Sendable {
    /// `count` bytes from a cryptographically secure generator.
    func bytes(_ count: Int) -> [UInt8]
}

/// The operating system's CSPRNG.
package struct SystemRandom: RandomSource {
    /// Creates the system generator.
    package init() {}
    package func bytes(_ count: Int) -> [UInt8] {
        // One getrandom(2) per 8 bytes rather than per byte.
        var generator = SystemRandomNumberGenerator()
        var result: [UInt8] = []
        result.reserveCapacity(count + 8)
        while result.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { result.append(contentsOf: $0) }
        }
        result.removeLast(result.count - count)
        return result
    }
}

extension RandomSource {
    /// `count` characters drawn uniformly from `alphabet` (rejection sampling, no modulo bias).
    package func string(count: Int, alphabet: [Character]) -> String {
        precondition(!alphabet.isEmpty && alphabet.count <= 256)
        let limit = 256 - (256 % alphabet.count)
        var result = ""
        result.reserveCapacity(count)
        while result.count < count {
            for byte in bytes(count * 2) where Int(byte) < limit {
                result.append(alphabet[Int(byte) % alphabet.count])
                if result.count == count { break }
            }
        }
        return result
    }
}
