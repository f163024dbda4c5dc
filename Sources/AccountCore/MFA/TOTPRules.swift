/// TOTP codes (RFC 6238, mfa-phone-tenants.md §B.11): six digits of HOTP-SHA1 over 30 s steps.
package enum TOTPRules {
    /// Seconds per step.
    package static let stepSeconds: Int64 = 30

    /// The step of `unixSeconds`.
    package static func step(at unixSeconds: Int64) -> Int64 {
        unixSeconds >= 0 ? unixSeconds / stepSeconds : (unixSeconds - stepSeconds + 1) / stepSeconds
    }

    /// The step a presented code proves, or nil: it must be six ASCII digits equal to the code of
    /// some step in [T−window, T+window] newer than `lastStep` (a replayed or older code is refused).
    /// Every candidate is computed and compared without an early exit; the highest match wins.
    package static func matchingStep(
        _ code: String, secret: [UInt8], unixSeconds: Int64, window: Int, lastStep: Int64?, hotp: any HOTPGenerator
    ) -> Int64? {
        let digits = Array(code.utf8)
        guard digits.count == 6, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let now = step(at: unixSeconds)
        let window = Int64(max(0, min(window, 10)))
        var matched: Int64?
        for candidate in (now - window)...(now + window) where candidate >= 0 {
            let equal = ConstantTime.equal(Array(hotp.code(secret: secret, counter: UInt64(candidate)).utf8), digits)
            let newer = lastStep.map { candidate > $0 } ?? true
            if equal && newer { matched = max(matched ?? candidate, candidate) }
        }
        return matched
    }
}

/// HOTP (RFC 4226) with HMAC-SHA1 and six digits; AccountCrypto implements it.
package protocol HOTPGenerator: Sendable {
    /// The six-digit code of `counter` under `secret`.
    func code(secret: [UInt8], counter: UInt64) -> String
}
