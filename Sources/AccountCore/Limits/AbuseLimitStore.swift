package import Foundation

/// Where the limits are counted (PostgreSQL, shared by every replica). Each call is its own short
/// statement, never inside a transaction that holds a user's row.
package protocol AbuseLimitStore: Sendable {
    /// Takes one cell of `bucket` for `key`: nil when allowed, else the seconds until one is free.
    func consume(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval?
    /// Whether a cell is free, without taking it: nil when it is, else the seconds until one is.
    func peek(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval?
    /// Counts a failure (afresh when the last is older than `resetSeconds`); the new count.
    func recordFailure(key: [UInt8], network: NetworkClass, now: Date, resetSeconds: TimeInterval) async throws -> Int
    /// Locks `key` for `network` until `until` (never shortens a lock), recording `ACCOUNT_LOCKED`.
    func lock(key: [UInt8], network: NetworkClass, until: Date, failures: Int) async throws
    /// Forgets the failures of `key` for `networks`; whether there were any.
    @discardableResult
    func clearFailures(key: [UInt8], networks: [NetworkClass]) async throws -> Bool
    /// What a password attempt is judged by before any hashing, in one round trip: the network
    /// class of `address` for `email` (known since `since`), the seconds until `bucket` frees a cell
    /// for `addressKey` (nil: free), and the account's failure row for that class.
    func passwordPrecheck(
        email: String, emailKey: [UInt8], address: String?, addressKey: [UInt8]?, bucket: (name: String, size: RateBucket)?,
        since: Date, now: Date
    ) async throws -> PasswordPrecheck
}

/// What ``AbuseLimitStore/passwordPrecheck(email:emailKey:address:addressKey:bucket:since:now:)`` found.
package struct PasswordPrecheck: Sendable, Equatable {
    package var network: NetworkClass
    /// Seconds until the address's failure bucket has a free cell; nil when it has one now.
    package var addressWait: TimeInterval?
    /// Whether the account has counted failures for this class (a success then clears them).
    package var hasFailures: Bool
    package var lockedUntil: Date?

    /// Creates a result.
    package init(network: NetworkClass, addressWait: TimeInterval?, hasFailures: Bool, lockedUntil: Date?) {
        self.network = network
        self.addressWait = addressWait
        self.hasFailures = hasFailures
        self.lockedUntil = lockedUntil
    }
}
