import Foundation

/// The abuse limits of federation-and-limits.md §E, as the use cases call them. Each check is one
/// short statement in the shared store, never inside a transaction that holds a user's row; a
/// disabled limiter (`demo-` projects by default) answers every check with "go on" and writes
/// nothing. Refusals are `AccountError`s with `retryAfter` set.
package struct AbuseLimiter: Sendable {
    package let settings: AbuseLimitSettings
    let store: any AbuseLimitStore
    let keyer: any LimitKeyer
    package let clock: any WallClock
    /// Where refusals and lockouts are counted.
    let telemetry: Telemetry

    /// Wires the limiter.
    package init(
        settings: AbuseLimitSettings, store: any AbuseLimitStore, keyer: any LimitKeyer, clock: any WallClock,
        telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        self.settings = settings
        self.store = store
        self.keyer = keyer
        self.clock = clock
    }

    /// No limits at all (tests of other behaviour, tools).
    package static func off(clock: any WallClock = SystemClock()) -> AbuseLimiter {
        AbuseLimiter(
            settings: AbuseLimitSettings(enabled: false), store: NoLimitStore(), keyer: NoLimitStore(), clock: clock, telemetry: .off)
    }

    /// The key an address counts under: IPv4 the address (also when IPv4-mapped), IPv6 its /64
    /// (§E.2, decision 13).
    package static func networkKey(_ address: String) -> String {
        IPAddress.networkKey(address)
    }

    // MARK: Buckets

    /// Takes a cell of `bucket` for `value` (an address or an email); throws its refusal when none
    /// is free. `code` overrides `TOO_MANY_ATTEMPTS_TRY_LATER` (a reset's `RESET_PASSWORD_EXCEED_LIMIT`).
    package func consume(_ bucket: LimitBucket, _ value: String?, code: AccountError.Code = .tooManyAttempts) async throws {
        guard settings.enabled, let value, let size = settings.buckets[bucket] else { return }
        if let wait = try await store.consume(bucket.rawValue, size, key: keyer.key(bucket.rawValue, value), now: clock.now()) {
            throw refusal(
                code, code == .tooManyAttempts || code == .quotaExceeded ? bucket.refusal : nil, wait: wait, bucket: bucket.rawValue)
        }
    }

    /// Counts one against `bucket` for `value` without refusing anything: a failure already
    /// answered with its own error (a wrong code) that the next request will be judged by.
    package func record(_ bucket: LimitBucket, _ value: String?) async throws {
        guard settings.enabled, let value, let size = settings.buckets[bucket] else { return }
        _ = try await store.consume(bucket.rawValue, size, key: keyer.key(bucket.rawValue, value), now: clock.now())
    }

    /// The refusals that count as a guessed code (§E.5, mfa-phone-tenants.md §A.8).
    static let codeFailures: Set<AccountError.Code> = [
        .invalidOOBCode, .expiredOOBCode, .invalidCode, .invalidSessionInfo, .sessionExpired, .invalidTemporaryProof,
        .invalidPendingToken, .invalidMFAPendingCredential, .invalidMFAEnrollmentID,
    ]

    /// Runs `body`, a request that takes an action code: refused up front while the address has
    /// used up its code failures, and a wrong or expired code counted against it (§E.5).
    package func countingCodeFailures<T>(address: String?, _ body: () async throws -> T) async throws -> T {
        let network = address.map(Self.networkKey)
        try await peek(.codeFailuresPerIP, network)
        do {
            return try await body()
        } catch let error as AccountError where Self.codeFailures.contains(error.code) {
            try await record(.codeFailuresPerIP, network)
            throw error
        }
    }

    /// The refusals of a presented credential (a custom token's §C.3 steps 2–13; later an IdP's):
    /// each counts against the client's address (§E.5 `credential_failures_per_ip`).
    static let credentialRefusals: Set<AccountError.Code> = [
        .invalidCustomToken, .credentialMismatch, .tenantIDMismatch, .missingIdentifier, .invalidClaims, .forbiddenClaim,
        .claimsTooLarge,
        // signInWithIdp (§A.3 steps 5–7, §A.4–§A.6)
        .invalidCredentialOrProviderID, .invalidProviderID, .operationNotAllowed, .invalidIDPResponse, .missingOrInvalidNonce,
        .invalidPendingToken,
    ]

    /// Runs `body`, a check of a presented credential: refused up front while the address has used
    /// up its credential failures, and a refusal of the credential counted against it.
    package func countingCredentialFailures<T>(address: String?, _ body: () async throws -> T) async throws -> T {
        let network = address.map(Self.networkKey)
        try await peek(.credentialFailuresPerIP, network)
        do {
            return try await body()
        } catch let error as AccountError where Self.credentialRefusals.contains(error.code) {
            try await record(.credentialFailuresPerIP, network)
            throw error
        }
    }

    /// Refuses when `bucket` has no free cell for `value`, without taking one: the guard in front
    /// of work a failure would be counted for (password hashing, code checks).
    package func peek(_ bucket: LimitBucket, _ value: String?, code: AccountError.Code = .tooManyAttempts) async throws {
        guard settings.enabled, let value, let size = settings.buckets[bucket] else { return }
        if let wait = try await store.peek(bucket.rawValue, size, key: keyer.key(bucket.rawValue, value), now: clock.now()) {
            throw refusal(code, bucket.refusal, wait: wait, bucket: bucket.rawValue)
        }
    }

    /// Counts a mail of `kind` about to be queued against the project's daily quota (decision 12:
    /// only mail actually queued counts).
    package func consumeMailQuota(_ kind: EmailKind, project: String) async throws {
        guard settings.enabled, let size = settings.mailQuotas[kind] else { return }
        let name = AbuseLimitSettings.quotaName(kind)
        if let wait = try await store.consume(name, size, key: keyer.key(name, project), now: clock.now()) {
            throw refusal(.quotaExceeded, "Exceeded daily quota for \(Self.quotaNoun(kind)) emails.", wait: wait, bucket: "mail_quota")
        }
    }

    /// Refuses as ``consumeMailQuota(_:project:)`` would while the quota is spent, counting
    /// nothing: the answer to a request that queues no mail (an unknown address under enumeration
    /// protection) must not differ from one that would.
    package func peekMailQuota(_ kind: EmailKind, project: String) async throws {
        guard settings.enabled, let size = settings.mailQuotas[kind] else { return }
        let name = AbuseLimitSettings.quotaName(kind)
        if let wait = try await store.peek(name, size, key: keyer.key(name, project), now: clock.now()) {
            throw refusal(.quotaExceeded, "Exceeded daily quota for \(Self.quotaNoun(kind)) emails.", wait: wait, bucket: "mail_quota")
        }
    }

    /// The mail buckets of a client's `sendOobCode`, in §E.5's order: spacing and count per
    /// recipient, then per address. Consumed whether or not the account exists.
    package func consumeClientMail(_ kind: EmailKind, recipient: String, address: String?) async throws {
        let code: AccountError.Code = kind == .passwordReset ? .resetPasswordExceedLimit : .tooManyAttempts
        try await consume(.mailPerAddressSpacing, recipient, code: code)
        try await consume(.mailPerAddress, recipient, code: code)
        // Decision 12: IPv6 mail senders count by /56, the smallest network a home or a host is usually given.
        try await consume(.mailPerIP, address.map { IPAddress.networkKey($0, ipv6Prefix: 56) })
    }

    static func quotaNoun(_ kind: EmailKind) -> String {
        switch kind {
        case .verifyEmail: "verification"
        case .verifyAndChangeEmail, .recoverEmail: "email change"
        case .passwordReset: "password reset"
        case .emailSignIn: "sign-in"
        case .revertSecondFactorAddition, .mfaWithdrawn: "security notice"
        }
    }

    // MARK: Password lockout (§E.4)

    /// The exact text of a locked account, Firebase's.
    package static let lockedText =
        "Access to this account has been temporarily disabled due to many failed login attempts. You can immediately restore it by resetting your password or you can try again later."

    /// Steps 1–3 before a password is checked, in one round trip: which network the attempt comes
    /// from, the address's failure bucket, and the account's lock for that network.
    package func beforePasswordCheck(email: String, address: String?) async throws -> PasswordPrecheck {
        let none = PasswordPrecheck(network: .unknown, addressWait: nil, hasFailures: false, lockedUntil: nil)
        guard settings.enabled else { return none }
        let now = clock.now()
        let bucket = LimitBucket.passwordFailuresPerIP
        let network = address.map(Self.networkKey)
        let check = try await store.passwordPrecheck(
            email: email.lowercased(), emailKey: emailKey(email), address: address,
            addressKey: network.map { keyer.key(bucket.rawValue, $0) }, bucket: settings.buckets[bucket].map { (bucket.rawValue, $0) },
            since: now - Double(settings.lockout.knownNetworkDays) * 86400, now: now)
        if let wait = check.addressWait { throw refusal(.tooManyAttempts, bucket.refusal, wait: wait, bucket: bucket.rawValue) }
        if let until = check.lockedUntil, until > now {
            throw refusal(.tooManyAttempts, Self.lockedText, wait: until.timeIntervalSince(now), bucket: "password_lockout")
        }
        return check
    }

    /// Step 4: a wrong password (or an unknown email) counts against the account's network class
    /// and the address; a lock starts at the threshold.
    package func passwordFailed(email: String, network: NetworkClass, address: String?) async throws {
        guard settings.enabled else { return }
        let now = clock.now()
        let key = emailKey(email)
        let failures = try await store.recordFailure(key: key, network: network, now: now, resetSeconds: settings.lockout.resetSeconds)
        if let until = LockoutRules.lockedUntil(failures: failures, network: network, now: now, policy: settings.lockout) {
            try await store.lock(key: key, network: network, until: until, failures: failures)
            telemetry.count(.lockoutsStarted, ["password_lockout"])
        }
        if let address, let size = settings.buckets[.passwordFailuresPerIP] {
            let name = LimitBucket.passwordFailuresPerIP.rawValue
            _ = try await store.consume(name, size, key: keyer.key(name, Self.networkKey(address)), now: now)
        }
    }

    /// Step 5: a verified password clears its own network class only (when it had failures: the
    /// common success writes nothing).
    package func passwordSucceeded(email: String, after check: PasswordPrecheck) async throws {
        guard settings.enabled, check.hasFailures else { return }
        try await store.clearFailures(key: emailKey(email), networks: [check.network])
    }

    /// Step 6: a reset, a password change or an admin's unlock clears both classes; whether there
    /// was anything to clear. Runs even with the limits off, so an unlock always clears.
    @discardableResult
    package func clearLockout(email: String?) async throws -> Bool {
        guard let email else { return false }
        let cleared = try await store.clearFailures(key: emailKey(email), networks: NetworkClass.allCases)
        if cleared { telemetry.count(.lockoutsCleared, ["password_lockout"]) }
        return cleared
    }

    func emailKey(_ email: String) -> [UInt8] {
        keyer.key("password_failures", email.lowercased())
    }

    func refusal(_ code: AccountError.Code, _ detail: String?, wait: TimeInterval, bucket: String) -> AccountError {
        telemetry.count(.limitRefusals, [bucket])
        var error = AccountError(code, detail)
        error.retryAfter = LockoutRules.retryAfter(until: clock.now() + wait, now: clock.now())
        return error
    }
}

/// The store and keyer of a limiter that is off: nothing is counted, nothing is refused.
struct NoLimitStore: AbuseLimitStore, LimitKeyer {
    func key(_ bucket: String, _ value: String) -> [UInt8] { [] }
    func consume(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval? { nil }
    func peek(_ name: String, _ bucket: RateBucket, key: [UInt8], now: Date) async throws -> TimeInterval? { nil }
    func recordFailure(key: [UInt8], network: NetworkClass, now: Date, resetSeconds: TimeInterval) async throws -> Int { 0 }
    func lock(key: [UInt8], network: NetworkClass, until: Date, failures: Int) async throws {}
    func clearFailures(key: [UInt8], networks: [NetworkClass]) async throws -> Bool { false }
    func passwordPrecheck(
        email: String, emailKey: [UInt8], address: String?, addressKey: [UInt8]?, bucket: (name: String, size: RateBucket)?,
        since: Date, now: Date
    ) async throws -> PasswordPrecheck {
        PasswordPrecheck(network: .unknown, addressWait: nil, hasFailures: false, lockedUntil: nil)
    }
}
