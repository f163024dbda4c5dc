package import Foundation

/// Second factors (mfa-phone-tenants.md §B): enrolment, withdrawal and the second step of a
/// challenged sign-in, for SMS and TOTP. Refusals come in the contract's order; every finalizing
/// change is one store transaction; one-time values are stored as hashes and TOTP secrets sealed.
package struct MFAService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    private let store: any MFAStore
    private let phone: PhoneSignInService
    private let secrets: any PhoneSecrets
    private let sealer: any SecretSealing
    private let hotp: any HOTPGenerator

    /// How long a TOTP enrolment waits for its code [FB-obs `finalizeEnrollmentTime`].
    package static let totpEnrollmentLifetime: TimeInterval = 900
    /// A TOTP answer must come within this of the first factor [FB-obs].
    package static let totpChallengeTimeout: TimeInterval = 300
    /// Wrong codes a pending credential or enrolment survives (§B.4).
    package static let maximumFailures = 5
    /// Google's proto-layer refusal, the exact message [FB-obs].
    package static let invalidArgument = AccountError(.malformedRequest, "Request contains an invalid argument.")

    package init(
        accounts: AccountService, environment: ServiceEnvironment, store: any MFAStore, phone: PhoneSignInService,
        secrets: any PhoneSecrets, sealer: any SecretSealing, hotp: any HOTPGenerator
    ) {
        self.accounts = accounts
        self.environment = environment
        self.store = store
        self.phone = phone
        self.secrets = secrets
        self.sealer = sealer
        self.hotp = hotp
    }

    private var now: Date { environment.clock.now() }
    private var settings: ProjectSettings { environment.settings }

    // MARK: Requests

    /// `mfaEnrollment:start`'s request (§B.5).
    package struct EnrollmentStart: Sendable {
        package var idToken: String?
        package var tenantID: String?
        /// `phoneEnrollmentInfo.phoneNumber` (nil when the info is absent; `phoneInfoPresent` says).
        package var phoneNumber: String?
        package var phoneInfoPresent = false
        package var totpInfoPresent = false
        package var appSignatureHash: String?
        package var locale: String?
        package var ipAddress: String?

        package init() {}
    }

    /// `mfaEnrollment:start`'s answer.
    package enum EnrollmentStarted: Sendable {
        case sms(sessionInfo: String)
        case totp(secret: String, sessionInfo: String, finalizeBy: Date)
    }

    /// `mfaEnrollment:finalize`'s request (§B.6).
    package struct EnrollmentFinalize: Sendable {
        package var idToken: String?
        package var tenantID: String?
        package var displayName: String?
        package var phoneInfoPresent = false
        package var totpInfoPresent = false
        package var sessionInfo: String?
        package var code: String?
        package var client: AccountService.Client
        /// The key the revert link of the notice carries.
        package var apiKey = ""

        package init(client: AccountService.Client) { self.client = client }
    }

    /// `mfaSignIn:start`'s request (§B.8).
    package struct SignInStart: Sendable {
        package var pendingCredential: String?
        package var enrollmentID: String?
        package var tenantID: String?
        package var phoneInfoPresent = false
        package var appSignatureHash: String?
        package var locale: String?
        package var ipAddress: String?

        package init() {}
    }

    /// `mfaSignIn:finalize`'s request (§B.9).
    package struct SignInFinalize: Sendable {
        package var pendingCredential: String?
        package var tenantID: String?
        package var enrollmentID: String?
        package var phoneInfoPresent = false
        package var totpInfoPresent = false
        package var sessionInfo: String?
        package var code: String?
        package var client: AccountService.Client

        package init(client: AccountService.Client) { self.client = client }
    }

    // MARK: Enrolment

    /// `mfaEnrollment:start` (§B.5), steps in order.
    package func startEnrollment(_ request: EnrollmentStart) async throws -> EnrollmentStarted {
        try Self.noTenant(request.tenantID)
        if request.phoneInfoPresent && request.totpInfoPresent { throw Self.oneof("phoneEnrollmentInfo") }
        let kind: MFAFactor.Kind = request.totpInfoPresent ? .totp : .phone
        try await requireEnabled(kind)
        let (caller, user) = try await caller(request.idToken)
        guard request.phoneInfoPresent || request.totpInfoPresent else { throw Self.invalidArgument }
        try requireEligible(caller, user)
        try await accounts.requireRecentLogin(caller, of: user)
        try Self.checkRoom(for: kind, in: user)
        try await environment.limiter.consume(.mfaEnrollmentsPerUser, user.localID)
        switch kind {
        case .totp:
            let secret = environment.random.bytes(20)
            let sessionInfo = Base64URL.encode(environment.random.bytes(32))
            let hash = secrets.hash(sessionInfo)
            let started = now
            let sealed = try sealer.seal(secret, context: Self.enrollmentContext(settings.projectID, user.localID, hash))
            try await store.startTOTPEnrollment(
                NewTOTPEnrollment(
                    hash: hash, localID: user.localID, sealedSecret: sealed, kekID: sealer.kekID, createdAt: started,
                    expiresAt: started + Self.totpEnrollmentLifetime))
            return .totp(secret: Base32.encode(secret), sessionInfo: sessionInfo, finalizeBy: started + Self.totpEnrollmentLifetime)
        case .phone:
            let number = try PhoneNumber.normalise(request.phoneNumber)
            if user.factors.contains(where: { $0.phoneNumber == number }) {
                throw AccountError(.secondFactorExists, "Phone number already enrolled as second factor for this account.")
            }
            let code = try await phone.prepareCode(
                number: number, purpose: .mfaEnrollment, config: try await phone.phoneConfig(), address: request.ipAddress,
                locale: request.locale, appSignatureHash: request.appSignatureHash)
            try await store.startSMSChallenge(code.session, binding: .enrollment(localID: user.localID), sms: code.sms)
            return .sms(sessionInfo: code.sessionInfo)
        }
    }

    /// `mfaEnrollment:finalize` (§B.6), steps in order (correction 1: the display name before the
    /// code's presence).
    package func finalizeEnrollment(_ request: EnrollmentFinalize) async throws -> AccountService.TokenBundle {
        try Self.noTenant(request.tenantID)
        if request.phoneInfoPresent && request.totpInfoPresent { throw Self.oneof("phoneVerificationInfo") }
        let kind: MFAFactor.Kind = request.totpInfoPresent ? .totp : .phone
        try await requireEnabled(kind)
        let (caller, user) = try await caller(request.idToken)
        guard request.phoneInfoPresent || request.totpInfoPresent else { throw Self.invalidArgument }
        // A factor's name is shown in every lookup and pending answer: a display name's bounds.
        try request.displayName.map(ProfileAttribute.checkDisplayName)
        let enrollmentID = UUID().uuidString.lowercased()
        let proof: SecondFactorProof
        switch kind {
        case .phone:
            guard let sessionInfo = request.sessionInfo, !sessionInfo.isEmpty else { throw AccountError(.missingSessionInfo) }
            guard let code = request.code, !code.isEmpty else { throw AccountError(.missingCode) }
            proof = .sms(sessionHash: secrets.hash(sessionInfo), codeMAC: secrets.codeMAC(sessionInfo: sessionInfo, code: code))
        case .totp:
            proof = try await totpEnrollmentProof(request, user: user, enrollmentID: enrollmentID)
        }
        var session = accounts.newSession(provider: caller.signInProvider, method: caller.signInProvider, client: request.client)
        session.secondFactor = SecondFactorClaim(kind: kind, enrollmentID: enrollmentID)
        let outcome = try await environment.limiter.countingCodeFailures(address: request.client.ipAddress) {
            try Self.settled(
                try await store.enroll(
                    EnrollmentWrite(
                        localID: user.localID, guardSession: caller.sessionGuard, proof: proof, enrollmentID: enrollmentID,
                        displayName: request.displayName.flatMap { $0.isEmpty ? nil : $0 }, session: session,
                        notice: revertNotice(user, enrollmentID: enrollmentID, kind: kind, apiKey: request.apiKey), now: now)))
        }
        guard case .signedIn(let enrolled, let ticket, _) = outcome else { throw AccountError(.unavailable) }
        return try await accounts.mint(enrolled, session, ticket)
    }

    /// §B.6 step 4: the TOTP enrolment, its display name and code, checked against its secret.
    private func totpEnrollmentProof(_ request: EnrollmentFinalize, user: UserRecord, enrollmentID: String) async throws
        -> SecondFactorProof
    {
        let sessionInfo = request.sessionInfo ?? ""
        let hash = secrets.hash(sessionInfo)
        guard !sessionInfo.isEmpty, let row = try await store.totpEnrollment(hash: hash), row.localID == user.localID else {
            throw AccountError(.invalidSessionInfo)
        }
        guard let displayName = request.displayName, !displayName.isEmpty else {
            throw AccountError(.missingDisplayName, "display name cannot be empty")
        }
        guard let code = request.code, !code.isEmpty else { throw Self.invalidArgument }
        if row.used || row.attempts >= Self.maximumFailures {
            throw AccountError(.tooManyEnrollmentAttempts, "restart enrollment")
        }
        guard row.expiresAt > now else { throw AccountError(.sessionExpired) }
        var secret = try sealer.open(row.sealedSecret, context: Self.enrollmentContext(settings.projectID, user.localID, hash))
        defer { secret.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        guard let step = try await matchingStep(code, secret: secret, lastStep: nil) else {
            try await store.totpEnrollmentFailed(hash: hash)
            try await environment.limiter.record(.codeFailuresPerIP, request.client.ipAddress.map(AbuseLimiter.networkKey))
            throw AccountError(.invalidCode)
        }
        let sealed = try sealer.seal(secret, context: Self.factorContext(settings.projectID, user.localID, enrollmentID))
        return .totpEnrollment(hash: hash, sealedSecret: sealed, kekID: sealer.kekID, step: step)
    }

    /// `mfaEnrollment:withdraw` (§B.7): the factor removed, every session revoked, a replacement
    /// for the caller that keeps the claims of another factor it passed (correction 4).
    package func withdraw(idToken: String?, enrollmentID: String?, tenantID: String?, client: AccountService.Client) async throws
        -> AccountService.TokenBundle
    {
        try Self.noTenant(tenantID)
        let (caller, user) = try await caller(idToken)
        guard let enrollmentID, let factor = user.factors.first(where: { $0.enrollmentID == enrollmentID }) else {
            throw AccountError(.mfaEnrollmentNotFound)
        }
        try await accounts.requireRecentLogin(caller, of: user)
        var session = accounts.newSession(provider: caller.signInProvider, method: caller.signInProvider, client: client)
        if let passed = caller.secondFactor, passed.enrollmentID != enrollmentID { session.secondFactor = passed }
        let notice = user.email.map { email in
            EmailTemplates.message(
                kind: .mfaWithdrawn, to: email, link: "", lang: "en", productName: settings.productName, newEmail: Self.describe(factor))
        }
        let outcome = try await store.withdraw(
            FactorWithdrawal(
                localID: user.localID, guardSession: caller.sessionGuard, enrollmentID: enrollmentID, session: session, notice: notice,
                now: now))
        guard case .signedIn(let after, let ticket, _) = try Self.settled(outcome) else { throw AccountError(.unavailable) }
        return try await accounts.mint(after, session, ticket)
    }

    // MARK: Sign-in

    /// `mfaSignIn:start` (§B.8, SMS only): a code to the factor's number.
    package func startSignIn(_ request: SignInStart) async throws -> String {
        try Self.noTenant(request.tenantID)
        try await requireEnabled(.phone)
        guard let credential = request.pendingCredential, !credential.isEmpty else {
            throw AccountError(.missingMFAPendingCredential, "Request does not have MFA pending credential.")
        }
        let hash = secrets.hash(credential)
        let (_, user) = try await pending(hash)
        guard let enrollmentID = request.enrollmentID, !enrollmentID.isEmpty else { throw Self.invalidArgument }
        guard let factor = user.factors.first(where: { $0.enrollmentID == enrollmentID }) else {
            throw AccountError(.mfaEnrollmentNotFound)
        }
        // Correction 2: no `phoneSignInInfo` is a proto fault; one for a TOTP factor (which has no
        // start) an invalid number [FB-obs].
        guard request.phoneInfoPresent else { throw Self.invalidArgument }
        guard factor.kind == .phone, let number = factor.phoneNumber else {
            throw AccountError(.invalidPhoneNumber, "Invalid format.")
        }
        let code = try await phone.prepareCode(
            number: number, purpose: .mfaSignIn, config: try await phone.phoneConfig(), address: request.ipAddress,
            locale: request.locale, appSignatureHash: request.appSignatureHash)
        try await store.startSMSChallenge(
            code.session, binding: .signIn(pendingHash: hash, localID: user.localID, enrollmentID: enrollmentID), sms: code.sms)
        return code.sessionInfo
    }

    /// `mfaSignIn:finalize` (§B.9), steps in order: the session the first factor was going to start,
    /// with the second factor's claims.
    package func finalizeSignIn(_ request: SignInFinalize) async throws -> AccountService.TokenBundle {
        try Self.noTenant(request.tenantID)
        if request.phoneInfoPresent && request.totpInfoPresent { throw Self.oneof("totpVerificationInfo") }
        let kind: MFAFactor.Kind = request.totpInfoPresent ? .totp : .phone
        try await requireEnabled(kind)
        guard let credential = request.pendingCredential, !credential.isEmpty else { throw Self.invalidArgument }
        let hash = secrets.hash(credential)
        let address = request.client.ipAddress
        return try await environment.limiter.countingCodeFailures(address: address) {
            let (pending, user) = try await pending(hash)
            let proof: SecondFactorProof
            let factorID: String
            switch kind {
            case .totp:
                (proof, factorID) = try await totpSignInProof(request, pending: pending, pendingHash: hash, user: user)
            case .phone:
                guard let sessionInfo = request.sessionInfo, !sessionInfo.isEmpty else { throw AccountError(.missingSessionInfo) }
                guard let code = request.code, !code.isEmpty else { throw AccountError(.missingCode) }
                proof = .sms(sessionHash: secrets.hash(sessionInfo), codeMAC: secrets.codeMAC(sessionInfo: sessionInfo, code: code))
                factorID = ""  // the session names it
            }
            var session = accounts.newSession(provider: pending.provider, method: pending.method, client: request.client)
            session.signInAttributes = pending.signInAttributes
            session.secondFactor = SecondFactorClaim(kind: kind, enrollmentID: factorID)
            let outcome = try await store.completeSignIn(SecondFactorSignIn(pendingHash: hash, proof: proof, session: session, now: now))
            guard case .signedIn(let signedIn, let ticket, let passed) = try Self.settled(outcome) else {
                throw AccountError(.unavailable)
            }
            // An SMS sign-in's factor is the one its session was sent for, as the store found it.
            session.secondFactor = passed
            return try await accounts.mint(signedIn, session, ticket)
        }
    }

    /// §B.9 step 3: the TOTP factor, the challenge's age, the factor's failures, the code.
    private func totpSignInProof(_ request: SignInFinalize, pending: PendingCredentialRow, pendingHash: [UInt8], user: UserRecord)
        async throws -> (SecondFactorProof, String)
    {
        guard let enrollmentID = request.enrollmentID, !enrollmentID.isEmpty, let code = request.code, !code.isEmpty else {
            throw Self.invalidArgument
        }
        guard user.factors.contains(where: { $0.enrollmentID == enrollmentID && $0.kind == .totp }),
            let stored = try await store.totpSecret(localID: user.localID, enrollmentID: enrollmentID)
        else { throw AccountError(.invalidMFAEnrollmentID) }
        if now.timeIntervalSince(pending.createdAt) >= Self.totpChallengeTimeout {
            throw AccountError(.totpChallengeTimeout, "TOTP challenge timeout, provide first factor again.")
        }
        // One guess of the factor's bound taken before the code is compared, atomically: parallel
        // guesses over many pending credentials cannot overrun it (a right code gives it back).
        guard try await store.reserveGuess(localID: user.localID, enrollmentID: enrollmentID, now: now) else {
            throw FactorGuesses.exhausted
        }
        var secret = try sealer.open(stored.sealed, context: Self.factorContext(settings.projectID, user.localID, enrollmentID))
        defer { secret.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        guard let step = try await matchingStep(code, secret: secret, lastStep: stored.lastStep) else {
            try await store.pendingFailed(hash: pendingHash)
            throw AccountError(.invalidCode)
        }
        return (.totp(enrollmentID: enrollmentID, step: step), enrollmentID)
    }

    // MARK: Steps

    /// §B.11 now, with the project's window at this moment.
    private func matchingStep(_ code: String, secret: [UInt8], lastStep: Int64?) async throws -> Int64? {
        let window = try await accounts.gate?.config().adjacentIntervals ?? 5
        return TOTPRules.matchingStep(
            code, secret: secret, unixSeconds: Int64(now.timeIntervalSince1970.rounded(.down)), window: window, lastStep: lastStep,
            hotp: hotp)
    }

    /// §B.4 steps 2–3 on a presented credential, before its transaction (which checks again).
    private func pending(_ hash: [UInt8]) async throws -> (PendingCredentialRow, UserRecord) {
        guard let row = try await store.pending(hash: hash), !row.used, row.failures < Self.maximumFailures else {
            throw AccountError(.invalidPendingToken)
        }
        guard row.expiresAt > now else {
            throw AccountError(.invalidMFAPendingCredential, "MFA pending credential is expired.")
        }
        guard let user = try await accounts.store.user(localID: row.localID) else { throw AccountError(.userNotFound) }
        try Self.check(row, against: user)
        return (row, user)
    }

    /// §B.4 step 3: the user as the pending credential left it.
    package static func check(_ row: PendingCredentialRow, against user: UserRecord) throws(AccountError) {
        if user.disabled { throw AccountError(.userDisabled) }
        guard user.credentialVersion == row.credentialVersion, row.createdAt >= user.tokensValidAfter else {
            throw AccountError(.invalidPendingToken)
        }
    }

    /// §B.5 step 4: the caller and their account.
    private func caller(_ idToken: String?) async throws -> (AccountService.Authenticated, UserRecord) {
        guard let idToken, !idToken.isEmpty else { throw AccountError(.invalidIDToken) }
        let caller = try await accounts.authenticate(idToken)
        guard let user = try await accounts.store.user(localID: caller.localID) else { throw AccountError(.userNotFound) }
        return (caller, user)
    }

    /// §B.5 steps 6–7: a first factor MFA can follow, and a verified email.
    private func requireEligible(_ caller: AccountService.Authenticated, _ user: UserRecord) throws(AccountError) {
        if ["anonymous", "phone", "custom", "gc.apple.com"].contains(caller.signInProvider) || user.isAnonymous {
            throw AccountError(.unsupportedFirstFactor, "MFA is not available for the given first factor.")
        }
        guard user.email != nil, user.emailVerified else {
            throw AccountError(.unverifiedEmail, "Need to verify email first before enrolling second factors.")
        }
    }

    /// §B.5 step 9: five factors at most, one TOTP.
    package static func checkRoom(for kind: MFAFactor.Kind, in user: UserRecord) throws(AccountError) {
        if user.factors.count >= MFAFactor.maximumPerUser {
            throw AccountError(.secondFactorLimitExceeded, "Too many second factors enrolled for this account.")
        }
        if kind == .totp && user.factors.contains(where: { $0.kind == .totp }) {
            throw AccountError(.secondFactorLimitExceeded, "Too many TOTP based second factors enrolled for this account.")
        }
    }

    /// §B.5 step 3.
    private func requireEnabled(_ kind: MFAFactor.Kind) async throws {
        let config = try await accounts.gate?.config() ?? MFAConfig()
        switch kind {
        case .phone where !config.smsEnabled: throw AccountError(.operationNotAllowed, "SMS based MFA not enabled.")
        case .totp where !config.totpEnabled: throw AccountError(.operationNotAllowed, "TOTP based MFA not enabled.")
        default: break
        }
    }

    /// The revert code and its notice for a factor just enrolled (§B.12).
    private func revertNotice(_ user: UserRecord, enrollmentID: String, kind: MFAFactor.Kind, apiKey: String) -> OutgoingCode? {
        guard let email = user.email else { return nil }
        var code = NewActionCode(
            random: environment.random, kind: .revertSecondFactorAddition, localID: user.localID, email: email, newEmail: nil,
            settingsJSON: "{}", lang: "en", now: now, lifetimes: settings.codeLifetimes)
        code.enrollmentID = enrollmentID
        let link = ActionCodeSettings().link(
            kind: .revertSecondFactorAddition, code: code.code, apiKey: apiKey, lang: "en", project: settings)
        let described = kind == .totp ? "an authenticator app" : "a phone"
        return OutgoingCode(
            code: code,
            email: EmailTemplates.message(
                kind: .revertSecondFactorAddition, to: email, link: link, lang: "en", productName: settings.productName,
                newEmail: described))
    }

    static func describe(_ factor: MFAFactor) -> String {
        factor.kind == .totp ? "an authenticator app" : PhoneNumber.obfuscated(factor.phoneNumber ?? "")
    }

    /// Tenants are not served yet (C.1: off until `multiTenant.allowTenants`).
    private static func noTenant(_ tenantID: String?) throws(AccountError) {
        if let tenantID, !tenantID.isEmpty { throw AccountError(.unsupportedTenantOperation) }
    }

    /// 0.1's oneof refusal, exact.
    private static func oneof(_ second: String) -> AccountError {
        AccountError(.malformedRequest, "Invalid value (oneof), oneof field 'enrollment_info' is already set. Cannot set '\(second)'")
    }

    /// The sealing context of an enrolment's secret (§0.2: project, user, the session's hash).
    static func enrollmentContext(_ project: String, _ localID: String, _ hash: [UInt8]) -> String {
        "accountd totp enrollment v1:\(project):\(localID):\(Hex.encode(hash))"
    }

    /// The sealing context of a factor's secret (§0.2: project ‖ tenant ‖ localId ‖ enrollment id).
    package static func factorContext(_ project: String, _ localID: String, _ enrollmentID: String) -> String {
        "accountd totp v1:\(project)::\(localID):\(enrollmentID)"
    }

    private static func settled(_ outcome: MFAOutcome) throws -> MFAOutcome {
        if case .refused(let error) = outcome { throw error }
        return outcome
    }
}
