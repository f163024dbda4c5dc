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

/// The buckets of federation-and-limits.md §E.5, each keyed by what it counts.
package enum LimitBucket: String, Sendable, CaseIterable {
    case passwordFailuresPerIP = "password_failures_per_ip"
    case accountCreationsPerIP = "account_creations_per_ip"
    case mailPerAddressSpacing = "mail_per_address_spacing"
    case mailPerAddress = "mail_per_address"
    case mailPerIP = "mail_per_ip"
    case codeFailuresPerIP = "code_failures_per_ip"
    case lookupsPerIP = "lookups_per_ip"
    case credentialFailuresPerIP = "credential_failures_per_ip"
    /// Redirect flows started (`createAuthUri` with a `providerId`), each a stored row (decision 17).
    case authFlowsPerIP = "auth_flows_per_ip"
    /// Redirect flows started in the whole project: the ceiling on the flow table however many
    /// addresses a client has (an IPv6 /48 holds 65,536 /64s, each with its own per-address bucket).
    case authFlowsPerProject = "auth_flows_per_project"
    /// Admin bearer tokens refused on the admin listener: guesses at an operator's token.
    case adminTokenFailuresPerIP = "admin_token_failures_per_ip"

    /// The default of §E.5.
    package var defaultBucket: RateBucket {
        switch self {
        case .passwordFailuresPerIP: RateBucket(burst: 60, period: 30)
        case .accountCreationsPerIP: RateBucket(burst: 100, period: 36)
        case .mailPerAddressSpacing: RateBucket(burst: 1, period: 60)
        case .mailPerAddress: RateBucket(burst: 5, period: 720)
        case .mailPerIP: RateBucket(burst: 20, period: 180)
        case .codeFailuresPerIP: RateBucket(burst: 30, period: 10)
        case .lookupsPerIP: RateBucket(burst: 60, period: 10)
        case .credentialFailuresPerIP: RateBucket(burst: 30, period: 10)
        case .authFlowsPerIP: RateBucket(burst: 100, period: 10)
        // 10,000 at once, then 1,000 a minute: with flows living ten minutes and swept every five,
        // at most about 25,000 rows (about 110 MB at the bounds' largest) ever exist.
        case .authFlowsPerProject: RateBucket(burst: 10_000, period: 0.06)
        case .adminTokenFailuresPerIP: RateBucket(burst: 20, period: 30)
        }
    }

    /// The refusal's text after `TOO_MANY_ATTEMPTS_TRY_LATER : ` (§E.5).
    package var refusal: String {
        switch self {
        case .passwordFailuresPerIP: "Too many unsuccessful login attempts. Please try again later."
        case .accountCreationsPerIP: "Too many accounts created from this network. Please try again later."
        case .mailPerAddressSpacing, .mailPerAddress: "Too many emails sent to this address. Please try again later."
        case .authFlowsPerProject: "Too many sign-in flows are in progress. Please try again later."
        case .mailPerIP, .codeFailuresPerIP, .lookupsPerIP, .credentialFailuresPerIP, .authFlowsPerIP, .adminTokenFailuresPerIP:
            "Too many requests from this network. Please try again later."
        }
    }
}

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

/// The abuse limits' settings (§E), read once at start.
package struct AbuseLimitSettings: Sendable {
    /// Whether any limit applies (`ACCOUNTD_ABUSE_LIMITS`; default on, off for `demo-` projects).
    package var enabled: Bool
    /// Each bucket's size; nil turns that bucket off.
    package var buckets: [LimitBucket: RateBucket]
    /// Daily mail quotas per kind; a missing kind is not limited.
    package var mailQuotas: [EmailKind: RateBucket]
    package var lockout = LockoutPolicy()

    /// The defaults of §E.5, on or off.
    package init(enabled: Bool) {
        self.enabled = enabled
        self.buckets = Dictionary(uniqueKeysWithValues: LimitBucket.allCases.map { ($0, $0.defaultBucket) })
        self.mailQuotas = [
            .verifyEmail: RateBucket(burst: 100_000, period: 86400 / 100_000),
            .verifyAndChangeEmail: RateBucket(burst: 10_000, period: 86400 / 10_000),
            .passwordReset: RateBucket(burst: 10_000, period: 86400 / 10_000),
            .emailSignIn: RateBucket(burst: 25_000, period: 86400 / 25_000),
        ]
    }

    /// The bucket name of a kind's project quota.
    package static func quotaName(_ kind: EmailKind) -> String { "mail_per_project_\(kind.rawValue)" }
}

/// Turns a bucket and a value (an address, an email) into the key the limiter stores: a keyed
/// hash, so the tables hold no address or email in plain text (§E.2).
package protocol LimitKeyer: Sendable {
    func key(_ bucket: String, _ value: String) -> [UInt8]
}

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
