import Foundation

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
    /// SMS to one number: a resend button, not a flood (mfa-phone-tenants.md §A.8).
    case smsPerNumberSpacing = "sms_per_number_spacing"
    case smsPerNumber = "sms_per_number"
    /// SMS to one number range (the number without its last three digits): SMS pumping walks ranges.
    case smsPerRange = "sms_per_range"
    case smsPerIP = "sms_per_ip"
    /// SMS of the whole project in a day: the operator's bill. Answered `QUOTA_EXCEEDED`.
    case smsPerProjectDay = "sms_per_project_day"
    /// Sessions of test numbers, which send no SMS and so count in no SMS bucket, but each write a
    /// row: per address, and for the whole project so that rotating addresses cannot fill the table.
    case testNumberSessionsPerIP = "test_number_sessions_per_ip"
    case testNumberSessionsPerProject = "test_number_sessions_per_project"
    /// Enrolments started by one user: each TOTP start is a row (a sealed secret) for 15 minutes,
    /// each SMS start a session, so a signed-in client cannot fill the tables.
    case mfaEnrollmentsPerUser = "mfa_enrollments_per_user"

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
        case .smsPerNumberSpacing: RateBucket(burst: 1, period: 60)
        case .smsPerNumber: RateBucket(burst: 5, period: 720)
        case .smsPerRange, .smsPerIP: RateBucket(burst: 10, period: 360)
        case .smsPerProjectDay: RateBucket(burst: 1000, period: 86.4)
        case .testNumberSessionsPerIP: RateBucket(burst: 100, period: 1)
        // 10,000 at once, then 1,000 a minute: sessions live ten minutes and are swept a week
        // after, so at most about 10 million rows (1.5 GB) however many addresses a client has.
        case .testNumberSessionsPerProject: RateBucket(burst: 10_000, period: 0.06)
        case .mfaEnrollmentsPerUser: RateBucket(burst: 10, period: 60)
        }
    }

    /// The refusal's text after `TOO_MANY_ATTEMPTS_TRY_LATER : ` (§E.5).
    package var refusal: String {
        switch self {
        case .passwordFailuresPerIP: "Too many unsuccessful login attempts. Please try again later."
        case .accountCreationsPerIP: "Too many accounts created from this network. Please try again later."
        case .mailPerAddressSpacing, .mailPerAddress: "Too many emails sent to this address. Please try again later."
        case .authFlowsPerProject: "Too many sign-in flows are in progress. Please try again later."
        case .smsPerNumberSpacing, .smsPerNumber, .smsPerRange: "Too many SMS sent to this number. Please try again later."
        case .smsPerProjectDay: "Exceeded daily quota for SMS."
        case .testNumberSessionsPerProject: "Too many verification sessions are in progress. Please try again later."
        case .mfaEnrollmentsPerUser: "Too many second factor enrollments started. Please try again later."
        case .mailPerIP, .codeFailuresPerIP, .lookupsPerIP, .credentialFailuresPerIP, .authFlowsPerIP, .adminTokenFailuresPerIP, .smsPerIP,
            .testNumberSessionsPerIP:
            "Too many requests from this network. Please try again later."
        }
    }
}
