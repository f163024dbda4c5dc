package import Foundation

/// Which network a password attempt comes from, for the account's lockout (§E.4 step 1).
package enum NetworkClass: String, Sendable, CaseIterable {
    /// An address one of the account's sessions was recently active from.
    case known
    /// Any other address (always, for an address with no account).
    case unknown
}

/// The numbers of the per-account lockout (§E.4).
package struct LockoutPolicy: Sendable, Equatable {
    package var thresholdUnknown = 5
    package var thresholdKnown = 10
    package var baseSeconds: TimeInterval = 30
    package var maxSeconds: TimeInterval = 900
    /// A failure older than this starts the count afresh.
    package var resetSeconds: TimeInterval = 12 * 3600
    /// Unknown-network failures that lock until a reset or an admin unlock; 0 = off.
    package var hardLimit = 100
    /// How recent a session's activity from an address makes it known.
    package var knownNetworkDays = 30

    /// The defaults of §E.4.
    package init() {}

    package func threshold(_ network: NetworkClass) -> Int {
        network == .known ? thresholdKnown : thresholdUnknown
    }
}

package enum LockoutRules {
    /// Until when `failures` failed attempts from `network` lock the account's password sign-in
    /// (§E.4 step 4 and 7): nil below the threshold; then the base delay doubling per failure,
    /// capped; for the unknown network at the hard limit, for ever (until a reset or an unlock).
    package static func lockedUntil(failures: Int, network: NetworkClass, now: Date, policy: LockoutPolicy) -> Date? {
        if network == .unknown, policy.hardLimit > 0, failures >= policy.hardLimit { return .distantFuture }
        let threshold = policy.threshold(network)
        guard failures >= threshold else { return nil }
        let doublings = min(failures - threshold, 30)
        return now + min(policy.baseSeconds * Double(1 << doublings), policy.maxSeconds)
    }

    /// The seconds a client waits until `instant`, as `Retry-After` carries them (1–86400, rounded
    /// up). A millisecond over a whole second is not another second: instants come back from the
    /// database rounded to the microsecond, so "30 s from now" may read back as 30.0000004.
    package static func retryAfter(until instant: Date, now: Date) -> Int {
        Int(min(max((instant.timeIntervalSince(now) - 0.001).rounded(.up), 1), 86400))
    }
}
