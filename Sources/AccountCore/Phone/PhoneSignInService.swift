package import Foundation

/// Phone sign-in (mfa-phone-tenants.md §A): `accounts:sendVerificationCode` sends a code to a
/// number; `accounts:signInWithPhoneNumber` proves it and signs in, creates, reauthenticates or
/// links. Codes, sessions and proofs are random, stored as MACs and hashes, single-use and bounded
/// in attempts (§0.2).
package struct PhoneSignInService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    private let store: any PhoneStore
    private let users: any AccountStore
    private let configs: ProjectConfigService
    private let secrets: any PhoneSecrets
    private let sealer: any SecretSealing
    private let options: Options

    /// What the server's configuration says about phone sign-in.
    package struct Options: Sendable {
        /// How long a code lives (`ACCOUNTD_SMS_CODE_TTL`, 60–1800 s).
        package var codeLifetime: TimeInterval = 600
        /// `%APP_NAME%` of the SMS text.
        package var appName = "accountd"
        /// The demo test inbox is on (§A.7): sessions keep their raw values for its listing.
        package var testInbox = false

        package init(codeLifetime: TimeInterval = 600, appName: String = "accountd", testInbox: Bool = false) {
            self.codeLifetime = codeLifetime
            self.appName = appName
            self.testInbox = testInbox
        }
    }

    /// How long a `temporaryProof` lives [EMU `temporaryProofExpiresIn:"3600"`].
    package static let proofLifetime: TimeInterval = 3600

    package init(
        accounts: AccountService, environment: ServiceEnvironment, store: any PhoneStore, users: any AccountStore,
        configs: ProjectConfigService, secrets: any PhoneSecrets, sealer: any SecretSealing, options: Options = Options()
    ) {
        self.accounts = accounts
        self.environment = environment
        self.store = store
        self.users = users
        self.configs = configs
        self.secrets = secrets
        self.sealer = sealer
        self.options = options
    }

    /// `sendVerificationCode`'s request.
    package struct SendRequest: Sendable {
        package var phoneNumber: String?
        package var tenantID: String?
        package var appSignatureHash: String?
        package var locale: String?
        /// The client's address (nil for an admin, who is never limited).
        package var ipAddress: String?

        package init(phoneNumber: String?, tenantID: String?, appSignatureHash: String?, locale: String?, ipAddress: String?) {
            self.phoneNumber = phoneNumber
            self.tenantID = tenantID
            self.appSignatureHash = appSignatureHash
            self.locale = locale
            self.ipAddress = ipAddress
        }
    }

    /// `accounts:sendVerificationCode` (§A.4), steps in order; returns the `sessionInfo`.
    package func sendVerificationCode(_ request: SendRequest) async throws -> String {
        let config = try await enabledConfig(tenantID: request.tenantID)
        let number = try PhoneNumber.normalise(request.phoneNumber)
        if try await users.users(localIDs: [], emails: [], phoneNumbers: [number]).first?.factors.isEmpty == false {
            throw PhoneRules.unsupportedFirstFactor
        }
        let code = try await prepareCode(
            number: number, purpose: .signIn, config: config, address: request.ipAddress, locale: request.locale,
            appSignatureHash: request.appSignatureHash)
        try await store.startPhoneVerification(code.session, sms: code.sms)
        return code.sessionInfo
    }

    /// A verification code about to be stored: its `sessionInfo`, the session row and, for a real
    /// number, its sealed SMS.
    package struct PreparedCode: Sendable {
        package var sessionInfo: String
        package var session: NewPhoneSession
        package var sms: SealedSMS?
    }

    /// A code for `number` (§A.4 steps 4, 6, 8; §B.5 step 10; §B.8 step 4): the region policy, a test
    /// number's fixed code (no SMS, its own bounds), else the SMS limits and a random code with its
    /// SMS sealed for the outbox.
    package func prepareCode(
        number: String, purpose: PhoneSessionPurpose, config: PhoneSignInConfig, address: String?, locale: String?,
        appSignatureHash: String?
    ) async throws -> PreparedCode {
        guard config.regions.admits(number) else {
            throw AccountError(.operationNotAllowed, "SMS unable to be sent until this region enabled by the app developer.")
        }
        let testCode = config.testNumbers[number]
        if testCode == nil {
            try await consumeSMSLimits(number: number, address: address)
        } else {
            // No SMS, so no SMS quota (§A.2), but every session is a row: bounded per address and
            // for the project as issue 31 bounded redirect flows.
            try await environment.limiter.consume(.testNumberSessionsPerIP, address.map(AbuseLimiter.networkKey))
            try await environment.limiter.consume(.testNumberSessionsPerProject, environment.settings.projectID)
        }
        let random = environment.random
        let now = environment.clock.now()
        let sessionInfo = Base64URL.encode(random.bytes(32))
        let code = testCode ?? random.string(count: 6, alphabet: Array("0123456789"))
        let expiresAt = now + options.codeLifetime
        let session = NewPhoneSession(
            sessionHash: secrets.hash(sessionInfo), codeMAC: secrets.codeMAC(sessionInfo: sessionInfo, code: code), phoneNumber: number,
            purpose: purpose, testNumber: testCode != nil, createdAt: now, expiresAt: expiresAt,
            inbox: options.testInbox ? (sessionInfo, code) : nil)
        var sms: SealedSMS?
        if testCode == nil {
            let message = SMSMessage(
                messageID: Base64URL.encode(random.bytes(16)), to: number, code: code,
                text: SMSMessage.text(code: code, appName: options.appName, appSignatureHash: appSignatureHash),
                locale: locale ?? "en", purpose: purpose.smsPurpose, expiresAt: expiresAt, appSignatureHash: appSignatureHash)
            sms = try seal(message)
        }
        return PreparedCode(sessionInfo: sessionInfo, session: session, sms: sms)
    }

    /// The phone configuration (test numbers, regions) whether or not phone sign-in is on: second
    /// factors use it too.
    package func phoneConfig() async throws -> PhoneSignInConfig {
        try await configs.current().phone
    }

    /// `signInWithPhoneNumber`'s request.
    package struct SignInRequest: Sendable {
        package var sessionInfo: String?
        package var code: String?
        package var phoneNumber: String?
        package var temporaryProof: String?
        package var idToken: String?
        package var tenantID: String?
        package var reauthentication: Bool
        package var client: AccountService.Client

        package init(
            sessionInfo: String?, code: String?, phoneNumber: String?, temporaryProof: String?, idToken: String?, tenantID: String?,
            reauthentication: Bool, client: AccountService.Client
        ) {
            self.sessionInfo = sessionInfo
            self.code = code
            self.phoneNumber = phoneNumber
            self.temporaryProof = temporaryProof
            self.idToken = idToken
            self.tenantID = tenantID
            self.reauthentication = reauthentication
            self.client = client
        }
    }

    /// How `signInWithPhoneNumber` answers.
    package enum SignInResult: Sendable {
        case signedIn(AccountService.SignedIn)
        /// The number is another account's: a `temporaryProof` signs its owner in (§A.5 link step 3).
        case temporaryProof(phoneNumber: String, proof: String, expiresIn: Int)
    }

    /// `accounts:signInWithPhoneNumber` (§A.5), steps in order.
    package func signIn(_ request: SignInRequest) async throws -> SignInResult {
        _ = try await enabledConfig(tenantID: request.tenantID)
        let proof = try presentedProof(request)
        let limiter = environment.limiter
        let address = request.client.ipAddress
        let session = accounts.newSession(provider: "phone", method: "phone", client: request.client)
        let now = environment.clock.now()
        if let idToken = request.idToken {
            // §A.5: the proof is step 2 and the caller's token step 3, so a refusal of the token
            // waits for the proof's verdict (a wrong code is INVALID_CODE, and counted).
            var caller: AccountService.Authenticated?
            var refusal: AccountError?
            do {
                let authenticated = try await accounts.authenticate(idToken)
                try await accounts.requireRecentLogin(authenticated, of: try await users.user(localID: authenticated.localID))
                caller = authenticated
            } catch let error as AccountError where error.code != .unavailable {
                refusal = error
            }
            let newProof = Base64URL.encode(environment.random.bytes(32))
            let outcome = try await limiter.countingCodeFailures(address: address) {
                try Self.settled(
                    try await store.linkPhone(
                        PhoneLink(
                            proof: proof, caller: caller.map { ($0.localID, $0.sessionGuard) }, refusal: refusal, session: session,
                            newProofHash: secrets.hash(newProof), proofExpiresAt: now + Self.proofLifetime, now: now)))
            }
            switch outcome {
            case .signedIn(let user, let ticket, _):
                return .signedIn(
                    AccountService.SignedIn(user: user, tokens: try await accounts.mint(user, session, ticket), isNewUser: false))
            case .numberOwnedElsewhere(let number):
                return .temporaryProof(phoneNumber: number, proof: newProof, expiresIn: Int(Self.proofLifetime))
            default:
                throw AccountError(.unavailable, "The account is busy, retry shortly.")
            }
        }
        // An account it creates counts against the client's address (F.E.5), taken only when the
        // sign-in turns out to create one.
        let newLocalID = LocalID.generate(environment.random)
        func attempt(admitted: Bool) async throws -> PhoneOutcome {
            try await limiter.countingCodeFailures(address: address) {
                try Self.settled(
                    try await store.signInWithPhone(
                        PhoneSignIn(
                            proof: proof, reauthentication: request.reauthentication, newLocalID: newLocalID, session: session,
                            creationAdmitted: admitted, now: now)))
            }
        }
        var outcome = try await attempt(admitted: !limiter.settings.enabled)
        if case .creationNeedsAdmission = outcome {
            try await limiter.consume(.accountCreationsPerIP, address.map(AbuseLimiter.networkKey))
            outcome = try await attempt(admitted: true)
        }
        guard case .signedIn(let user, let ticket, let isNewUser) = outcome else {
            throw AccountError(.unavailable, "The account is busy, retry shortly.")
        }
        return .signedIn(AccountService.SignedIn(user: user, tokens: try await accounts.mint(user, session, ticket), isNewUser: isNewUser))
    }

    /// The demo test inbox's listing (§A.7); empty unless the switch is on.
    package func inboxCodes() async throws -> [InboxCode] {
        guard options.testInbox else { return [] }
        return try await store.inboxCodes(now: environment.clock.now())
    }

    // MARK: Steps

    /// Steps 1–2 of §A.4 and step 1 of §A.5: the project's phone configuration, if phone sign-in is on.
    private func enabledConfig(tenantID: String?) async throws -> PhoneSignInConfig {
        if let tenantID, !tenantID.isEmpty { throw AccountError(.unsupportedTenantOperation) }
        let config = try await configs.current().phone
        guard config.enabled else { throw AccountError(.operationNotAllowed, "Phone sign-in is not enabled.") }
        return config
    }

    /// §A.5 step 2's presence checks: a `temporaryProof` with its number, or a session with its code.
    private func presentedProof(_ request: SignInRequest) throws -> PhoneProof {
        if let proof = request.temporaryProof, !proof.isEmpty {
            guard let raw = request.phoneNumber, !raw.isEmpty else { throw AccountError(.missingPhoneNumber) }
            return .temporaryProof(hash: secrets.hash(proof), phoneNumber: try PhoneNumber.normalise(raw))
        }
        guard let sessionInfo = request.sessionInfo, !sessionInfo.isEmpty else { throw AccountError(.missingSessionInfo) }
        guard let code = request.code, !code.isEmpty else { throw AccountError(.missingCode) }
        return .session(hash: secrets.hash(sessionInfo), codeMAC: secrets.codeMAC(sessionInfo: sessionInfo, code: code))
    }

    /// §A.8 rows 1–5, in order, all consumed; test numbers never reach them.
    private func consumeSMSLimits(number: String, address: String?) async throws {
        let limiter = environment.limiter
        try await limiter.consume(.smsPerNumberSpacing, number)
        try await limiter.consume(.smsPerNumber, number)
        try await limiter.consume(.smsPerRange, PhoneNumber.range(of: number))
        try await limiter.consume(.smsPerIP, address.map(AbuseLimiter.networkKey))
        try await limiter.consume(.smsPerProjectDay, environment.settings.projectID, code: .quotaExceeded)
    }

    private func seal(_ message: SMSMessage) throws -> SealedSMS {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let sealed = try sealer.seal(Array(try encoder.encode(message)), context: SealedSMS.context(message.messageID))
        return SealedSMS(messageID: message.messageID, sealed: sealed, kekID: sealer.kekID, expiresAt: message.expiresAt)
    }

    /// A refusal the store recorded before answering (a wrong code counted) is thrown here, outside
    /// its transaction.
    private static func settled(_ outcome: PhoneOutcome) throws -> PhoneOutcome {
        if case .refused(let error) = outcome { throw error }
        return outcome
    }
}
