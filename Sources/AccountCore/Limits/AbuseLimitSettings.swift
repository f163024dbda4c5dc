import Foundation

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
