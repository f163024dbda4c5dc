package import AccountCore
import Foundation
import Synchronization

/// Counts refused admin bearer tokens per client address (`admin_token_failures_per_ip`,
/// federation-and-limits.md §E.5): a wrong token costs a cell of the address's bucket in
/// PostgreSQL, shared by every replica; once the bucket is empty, wrong tokens from the address are
/// answered `TOO_MANY_ATTEMPTS_TRY_LATER` with `Retry-After`, from memory, until it refills. A
/// configured token is never limited and touches nothing (§E.6): an operator behind the same NAT
/// as a guesser, or a backend with a rotated-out token beside a current one, is never locked out,
/// and a 128-bit token (what a real project must configure) gives a guesser nothing to find.
///
/// The refusal is remembered on the replica that saw it (in memory, at most ``capacity``
/// addresses); each replica learns of a spent bucket at the first failure it sees.
package final class AdminTokenGuard: Sendable {
    private let limiter: AbuseLimiter
    private let blocked = Mutex<[String: Date]>([:])
    /// The most refused addresses remembered; the oldest go first.
    static let capacity = 10_000

    /// Creates a guard over the project's limiter (a limiter that is off refuses nothing).
    package init(limiter: AbuseLimiter) {
        self.limiter = limiter
    }

    /// Throws the bucket's refusal while `address` is out of guesses on this replica (asked only
    /// for a wrong token).
    package func admit(_ address: String?) throws(AccountError) {
        guard let address = address.map(AbuseLimiter.networkKey), limiter.settings.enabled else { return }
        let now = limiter.clock.now()
        let until = blocked.withLock { blocked -> Date? in
            guard let until = blocked[address] else { return nil }
            if until <= now {
                blocked[address] = nil
                return nil
            }
            return until
        }
        guard let until else { return }
        var error = AccountError(.tooManyAttempts, LimitBucket.adminTokenFailuresPerIP.refusal)
        error.retryAfter = LockoutRules.retryAfter(until: until, now: now)
        throw error
    }

    /// Counts a refused token from `address`; throws the bucket's refusal (and remembers it) when
    /// the address has none left.
    package func failed(_ address: String?) async throws {
        guard let address = address.map(AbuseLimiter.networkKey), limiter.settings.enabled else { return }
        do {
            try await limiter.consume(.adminTokenFailuresPerIP, address)
        } catch let error as AccountError where error.code == .tooManyAttempts {
            let until = limiter.clock.now() + TimeInterval(error.retryAfter ?? 1)
            blocked.withLock { blocked in
                if blocked.count >= Self.capacity, let oldest = blocked.min(by: { $0.value < $1.value })?.key {
                    blocked[oldest] = nil
                }
                blocked[address] = until
            }
            throw error
        }
    }
}
