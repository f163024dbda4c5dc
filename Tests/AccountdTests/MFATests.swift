import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

@testable import accountd

extension API {
    /// POSTs an Identity Toolkit v2 RPC (`/v2/accounts/NAME?key=…`); with `address`, as that client
    /// behind the trusted proxy (`X-Forwarded-For`).
    func v2(_ rpc: String, _ body: [String: any Sendable], from address: String? = nil) async throws -> TestHTTPClient.Reply {
        try await http.post("/v2/accounts/\(rpc)?key=\(Self.key)", body, headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
    }
}

/// Multi-factor authentication (mfa-phone-tenants.md §B, checklist B.17 M1–M20) over real HTTP
/// against PostgreSQL, in a production configuration: abuse limits on, SMS and mail delivered to
/// signed webhooks (one local receiver takes both), and the service's clock a ManualClock standing
/// at a known point of a 30 s TOTP step, moved only by the test. TOTP codes come from an independent
/// RFC 6238 implementation (TOTPReference.swift); SMS factors use the project's test numbers unless
/// a test needs a real, random code.
@Suite("Multi-factor authentication (mfa-phone-tenants.md §B)")
struct MFATests {
    static let project = "acme-prod"
    static let password = "secret-pass"
    /// Test numbers (§A.2): fixed codes, no SMS; they serve second factors too (§B.5 step 10).
    static let testNumbers = [
        "+15555550100": "123456", "+15555550101": "123457", "+15555550102": "123458", "+15555550105": "123461",
    ]
    static let smsOff = "OPERATION_NOT_ALLOWED : SMS based MFA not enabled."
    static let totpOff = "OPERATION_NOT_ALLOWED : TOTP based MFA not enabled."
    static let invalidArgument = "Request contains an invalid argument."
    static let unsupportedFirstFactor = "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor."
    static let tooManyFactors = "SECOND_FACTOR_LIMIT_EXCEEDED : Too many second factors enrolled for this account."
    static let quotaExceeded = "QUOTA_EXCEEDED : Exceeded quota."

    /// The production configuration of the phone suite (webhook SMS, limits on), with its mail going
    /// to the same receiver instead of the log, so that a test reads the links it was mailed.
    static func configuration(webhook: String) -> Configuration {
        var configuration = PhoneProductionTests.configuration(webhook: webhook)
        configuration.email.transportEnvironment = [
            "ACCOUNTD_MAIL_TRANSPORT": "webhook", "ACCOUNTD_WEBHOOK_URL": webhook,
            "ACCOUNTD_WEBHOOK_SECRET": "mail-secret-0123456789abcdef",
        ]
        return configuration
    }

    /// Where the service's clock starts: 5 s into a 30 s step, 25 to 55 s before the machine's time.
    /// Only the start is taken from the machine, so that the outboxes (which run on the machine's
    /// clock) deliver at once; every TOTP step a test computes is the manual clock's.
    static func stepStart() -> Date {
        let now = Int64(Date().timeIntervalSince1970)
        return Date(timeIntervalSince1970: TimeInterval(now - now % 30 - 25))
    }

    /// A test's server: a fresh database, the production configuration (changed by `configure`), a
    /// manual clock, phone sign-in on with `testNumbers`, and (with `mfa`) both kinds of factor on.
    static func run(
        testNumbers: [String: String] = MFATests.testNumbers, mfa: Bool = true, clockStart: Date? = nil,
        configure: @Sendable (inout Configuration) -> Void = { _ in },
        _ body: @escaping @Sendable (Fixture) async throws -> Void
    ) async throws {
        let receiver = SMSReceiver()
        let database = try await TestDatabase.createMigrated()
        let clock = ManualClock(start: clockStart ?? stepStart())
        try await receiver.run { url in
            var configuration = Self.configuration(webhook: url)
            configure(&configuration)
            try await withServer(configuration, database: database, clock: clock) { http in
                let fixture = Fixture(
                    api: API(http: http, project: Self.project), http: http, database: database, clock: clock, receiver: receiver)
                try await PhoneSignInTests.enablePhone(http, project: Self.project, testNumbers: testNumbers)
                if mfa { try await fixture.setMFA() }
                try await body(fixture)
            }
        }
    }

    // MARK: Bodies and readings

    /// `config.mfa` (§B.1): both kinds on by default.
    static func mfaConfig(state: String = "ENABLED", sms: Bool = true, totp: Bool = true, adjacentIntervals: Int? = 5)
        -> [String: any Sendable]
    {
        var totpConfig: [String: any Sendable] = [:]
        if let adjacentIntervals { totpConfig["adjacentIntervals"] = adjacentIntervals }
        var mfa: [String: any Sendable] = [
            "state": state,
            "providerConfigs": [["state": totp ? "ENABLED" : "DISABLED", "totpProviderConfig": totpConfig] as [String: any Sendable]],
        ]
        if sms { mfa["enabledProviders"] = ["PHONE_SMS"] }
        return ["mfa": mfa]
    }

    static func smsStart(_ idToken: String, _ number: String) -> [String: any Sendable] {
        ["idToken": idToken, "phoneEnrollmentInfo": ["phoneNumber": number]]
    }

    static func totpStart(_ idToken: String) -> [String: any Sendable] {
        ["idToken": idToken, "totpEnrollmentInfo": [String: String]()]
    }

    static func smsFinalize(_ idToken: String, _ sessionInfo: String?, _ code: String?) -> [String: any Sendable] {
        var verification: [String: any Sendable] = [:]
        if let sessionInfo { verification["sessionInfo"] = sessionInfo }
        if let code { verification["code"] = code }
        return ["idToken": idToken, "phoneVerificationInfo": verification]
    }

    static func totpFinalize(_ idToken: String, _ displayName: String?, _ sessionInfo: String?, _ code: String?) -> [String: any Sendable] {
        var verification: [String: any Sendable] = [:]
        if let sessionInfo { verification["sessionInfo"] = sessionInfo }
        if let code { verification["verificationCode"] = code }
        var body: [String: any Sendable] = ["idToken": idToken, "totpVerificationInfo": verification]
        if let displayName { body["displayName"] = displayName }
        return body
    }

    static func text(_ reply: TestHTTPClient.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// The second-factor claims of an ID token (§B.10) and its first factor.
    struct FactorClaims {
        var kind: String?
        var id: String?
        var provider: String?
    }

    static func factorClaims(_ session: Session) -> FactorClaims {
        let firebase = session.claims["firebase"] as? [String: Any]
        return FactorClaims(
            kind: firebase?["sign_in_second_factor"] as? String, id: firebase?["second_factor_identifier"] as? String,
            provider: firebase?["sign_in_provider"] as? String)
    }

    /// A UUID of version 4 (§B.2).
    static func isUUIDv4(_ text: String?) -> Bool {
        guard let text, text.count == 36, UUID(uuidString: text) != nil else { return false }
        let characters = Array(text.lowercased())
        return characters[14] == "4" && "89ab".contains(characters[19])
    }

    /// RFC 3339 UTC with microseconds (§B.2, correction 6).
    static func isMicroseconds(_ text: String?) -> Bool {
        guard let text else { return false }
        return text.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"#, options: .regularExpression) != nil
    }

    /// The instant of an RFC 3339 UTC timestamp, to the second.
    static func instant(_ text: String?) -> Date? {
        guard let text, let end = text.firstIndex(of: ".") ?? text.firstIndex(of: "Z") else { return nil }
        return ISO8601DateFormatter().date(from: String(text[..<end]) + "Z")
    }

    /// The v2 error shape (§0.1): 400, `status` INVALID_ARGUMENT, no `errors` array.
    static func expectV2Shape(_ reply: TestHTTPClient.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = reply.json["error"] as? [String: Any]
        #expect(reply.status == 400, "\(text(reply))", sourceLocation: sourceLocation)
        #expect(error?["code"] as? Int == 400, sourceLocation: sourceLocation)
        #expect(error?["status"] as? String == "INVALID_ARGUMENT", sourceLocation: sourceLocation)
        #expect(error?["errors"] == nil, "v2 errors carry no errors array", sourceLocation: sourceLocation)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Every row of every table, as text.
    static func dump(_ database: DatabaseURL) async throws -> String {
        try await TestDatabase.withClient(database) { client in
            var tables: [String] = []
            for name in try await client.query(
                """
                SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
                WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1
                """
            ).decode(String.self) { tables.append(name) }
            var text = ""
            for table in tables {
                for row in try await client.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \(table) t", binds: PostgresBindings()))
                    .decode(String.self)
                {
                    text += table + " " + row + "\n"
                }
            }
            return text
        }
    }

    /// M20: none of `strings` (one-time values as the client holds them), `secrets` (raw secret
    /// bytes) or `codes` (SMS codes) is anywhere in the database, in any usual encoding.
    static func expectNothingInClear(
        _ database: DatabaseURL, secrets: [[UInt8]] = [], strings: [String], codes: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let dump = try await Self.dump(database)
        let lowered = dump.lowercased()
        for value in strings {
            #expect(!lowered.contains(value.lowercased()), "\(value.prefix(6))… is stored in clear", sourceLocation: sourceLocation)
            if let raw = TestBase64URL.decode(value), raw.count >= 16 {
                #expect(
                    !lowered.contains(hex(raw)), "the bytes of \(value.prefix(6))… are stored in clear", sourceLocation: sourceLocation)
            }
        }
        for secret in secrets {
            #expect(!lowered.contains(hex(secret)), "a TOTP secret is stored in clear (hex)", sourceLocation: sourceLocation)
            let base64 = Data(secret).base64EncodedString().trimmingCharacters(in: CharacterSet(charactersIn: "="))
            #expect(!dump.contains(base64), "a TOTP secret is stored in clear (base64)", sourceLocation: sourceLocation)
            let base64URL = TestBase64URL.encode(secret)
            #expect(!dump.contains(base64URL), "a TOTP secret is stored in clear (base64url)", sourceLocation: sourceLocation)
        }
        // Long hex runs (hashes, sealed bytes) and fractions of seconds could hold any six digits by chance.
        let stripped = lowered.replacingOccurrences(of: "[0-9a-f]{16,}", with: "", options: .regularExpression)
        for code in codes {
            #expect(
                stripped.range(of: "(?<![0-9.])\(code)(?![0-9])", options: .regularExpression) == nil, "an SMS code is stored in clear",
                sourceLocation: sourceLocation)
            #expect(!lowered.contains(hex(Array(code.utf8))), "an SMS code is stored in clear (hex)", sourceLocation: sourceLocation)
        }
    }

    /// A started TOTP enrolment, its secret and its finalized factor.
    struct TOTPFactor: Sendable {
        var secret: [UInt8]
        var sharedSecretKey: String
        var sessionInfo: String
        var enrollmentID: String
        /// The caller's replacement session, which passed this factor.
        var session: Session
    }

    /// One test's server and its parts.
    struct Fixture: Sendable {
        let api: API
        let http: TestHTTPClient
        let database: DatabaseURL
        let clock: ManualClock
        let receiver: SMSReceiver

        /// The service's current TOTP step.
        var step: Int64 { TOTPReference.step(at: clock.now()) }

        func v2(_ rpc: String, _ body: [String: any Sendable], from address: String? = nil) async throws -> TestHTTPClient.Reply {
            try await api.v2(rpc, body, from: address)
        }

        func patchMFA(_ body: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
            try await PhoneSignInTests.patchConfig(http, project: api.project, mask: "mfa", body)
        }

        func setMFA(state: String = "ENABLED", sms: Bool = true, totp: Bool = true, adjacentIntervals: Int? = 5) async throws {
            let reply = try await patchMFA(
                MFATests.mfaConfig(state: state, sms: sms, totp: totp, adjacentIntervals: adjacentIntervals))
            guard reply.status == 200 else { throw TestDatabaseError("setting mfa: \(MFATests.text(reply))") }
        }

        /// The account as the admin API lists it.
        func user(_ localID: String) async throws -> [String: Any]? {
            (try await api.admin("lookup", ["localId": [localID]]).json["users"] as? [[String: Any]])?.first
        }

        /// The account's `mfaInfo` (empty when absent).
        func factors(_ localID: String) async throws -> [[String: Any]] {
            try await user(localID)?["mfaInfo"] as? [[String: Any]] ?? []
        }

        /// A verified email-and-password account made by the admin API, signed in now.
        func verifiedUser(_ email: String) async throws -> Session {
            let created = try await api.admin("signUp", ["email": email, "password": MFATests.password, "emailVerified": true])
            guard created.status == 200 else { throw TestDatabaseError("admin signUp: \(MFATests.text(created))") }
            return try await api.signIn(email, MFATests.password)
        }

        func signInWithPassword(_ email: String, _ password: String = MFATests.password, from address: String? = nil) async throws
            -> TestHTTPClient.Reply
        {
            try await http.post(
                "/v1/accounts:signInWithPassword?key=\(API.key)", ["email": email, "password": password, "returnSecureToken": true],
                headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
        }

        /// The pending credential of a challenged password sign-in.
        func challenge(_ email: String, _ password: String = MFATests.password, from address: String? = nil) async throws -> String {
            let reply = try await signInWithPassword(email, password, from: address)
            return try #require(reply.string("mfaPendingCredential"), "not challenged: \(MFATests.text(reply))")
        }

        func finalizeTOTP(_ credential: String, _ enrollmentID: String, _ code: String, from address: String? = nil) async throws
            -> TestHTTPClient.Reply
        {
            try await v2(
                "mfaSignIn:finalize",
                ["mfaPendingCredential": credential, "mfaEnrollmentId": enrollmentID, "totpVerificationInfo": ["verificationCode": code]],
                from: address)
        }

        /// `mfaSignIn:start` for an SMS factor, as the JS SDK sends it.
        func startSMSReply(_ credential: String, _ enrollmentID: String) async throws -> TestHTTPClient.Reply {
            try await v2(
                "mfaSignIn:start",
                ["mfaPendingCredential": credential, "mfaEnrollmentId": enrollmentID, "phoneSignInInfo": [String: String]()])
        }

        /// `mfaSignIn:start` for an SMS factor: the sessionInfo.
        func startSMS(_ credential: String, _ enrollmentID: String) async throws -> String {
            let started = try await startSMSReply(credential, enrollmentID)
            return try #require(
                (started.json["phoneResponseInfo"] as? [String: Any])?["sessionInfo"] as? String, "\(MFATests.text(started))")
        }

        func finalizeSMS(_ credential: String, _ sessionInfo: String?, _ code: String?) async throws -> TestHTTPClient.Reply {
            var verification: [String: any Sendable] = [:]
            if let sessionInfo { verification["sessionInfo"] = sessionInfo }
            if let code { verification["code"] = code }
            return try await v2("mfaSignIn:finalize", ["mfaPendingCredential": credential, "phoneVerificationInfo": verification])
        }

        /// A whole SMS second step: start, then finalize with `code`.
        func smsSignIn(_ credential: String, _ enrollmentID: String, code: String) async throws -> TestHTTPClient.Reply {
            try await finalizeSMS(credential, try await startSMS(credential, enrollmentID), code)
        }

        /// Enrols the test number `number`: the caller's replacement session and the new factor's id.
        func enrollPhone(_ session: Session, _ number: String, displayName: String? = nil) async throws -> (
            session: Session, enrollmentID: String
        ) {
            let started = try await v2("mfaEnrollment:start", MFATests.smsStart(session.idToken, number))
            let sessionInfo = try #require(
                (started.json["phoneSessionInfo"] as? [String: Any])?["sessionInfo"] as? String, "\(MFATests.text(started))")
            let code = try #require(MFATests.testNumbers[number], "\(number) is no test number")
            var body = MFATests.smsFinalize(session.idToken, sessionInfo, code)
            if let displayName { body["displayName"] = displayName }
            let finalized = try await v2("mfaEnrollment:finalize", body)
            guard finalized.status == 200 else { throw TestDatabaseError("SMS enrolment: \(MFATests.text(finalized))") }
            var replacement = Session(finalized)
            replacement.localID = session.localID
            let enrollmentID = try #require(MFATests.factorClaims(replacement).id)
            return (replacement, enrollmentID)
        }

        /// `mfaEnrollment:start` for TOTP: the secret and the sessionInfo.
        func startTOTP(_ idToken: String) async throws -> (secret: [UInt8], sessionInfo: String) {
            let started = try await v2("mfaEnrollment:start", MFATests.totpStart(idToken))
            let info = try #require(started.json["totpSessionInfo"] as? [String: Any], "\(MFATests.text(started))")
            let key = try #require(info["sharedSecretKey"] as? String)
            let secret = try #require(TOTPReference.base32Decode(key))
            let sessionInfo = try #require(info["sessionInfo"] as? String)
            return (secret, sessionInfo)
        }

        /// Enrols a TOTP factor with the code of the current step. Of up to three started enrolments
        /// it finalizes the first whose codes are distinct over the steps the tests use, so that no
        /// refusal or acceptance below is a chance collision of two steps' codes.
        func enrollTOTP(_ session: Session, displayName: String = "Authenticator") async throws -> TOTPFactor {
            let now = step
            var chosen: (secret: [UInt8], key: String, sessionInfo: String)?
            for _ in 0..<3 where chosen == nil {
                let started = try await v2("mfaEnrollment:start", MFATests.totpStart(session.idToken))
                let info = try #require(started.json["totpSessionInfo"] as? [String: Any], "\(MFATests.text(started))")
                let key = try #require(info["sharedSecretKey"] as? String)
                let secret = try #require(TOTPReference.base32Decode(key))
                let sessionInfo = try #require(info["sessionInfo"] as? String)
                if TOTPReference.distinct(secret: secret, steps: (now - 20)...(now + 60)) { chosen = (secret, key, sessionInfo) }
            }
            let (secret, key, sessionInfo) = try #require(chosen)
            let finalized = try await v2(
                "mfaEnrollment:finalize",
                MFATests.totpFinalize(session.idToken, displayName, sessionInfo, TOTPReference.code(secret: secret, step: now)))
            guard finalized.status == 200 else { throw TestDatabaseError("TOTP enrolment: \(MFATests.text(finalized))") }
            var replacement = Session(finalized)
            replacement.localID = session.localID
            let enrollmentID = try #require(MFATests.factorClaims(replacement).id)
            return TOTPFactor(
                secret: secret, sharedSecretKey: key, sessionInfo: sessionInfo, enrollmentID: enrollmentID, session: replacement)
        }

        /// The codes the SMS webhook delivered to `number`, oldest first.
        func smsCodes(to number: String) -> [String] {
            receiver.deliveries.map(\.json).filter { $0["to"] as? String == number }.compactMap { $0["code"] as? String }
        }

        /// Waits for the SMS after the first `count` to `number` and answers its code.
        func nextSMSCode(to number: String, after count: Int) async throws -> String {
            try await waitFor("SMS \(count + 1) reaches \(number)") { smsCodes(to: number).count > count }
            return try #require(smsCodes(to: number).dropFirst(count).first)
        }

        /// The mails the webhook delivered to `email`.
        func mails(to email: String) -> [[String: Any]] {
            receiver.deliveries.map(\.json).filter { $0["to"] as? String == email && $0["code"] == nil }
        }

        /// The oobCodes of REVERT_SECOND_FACTOR_ADDITION links mailed to `email`, oldest first.
        func revertCodes(mailedTo email: String) -> [String] {
            mails(to: email).compactMap { mail -> String? in
                for field in ["link", "text"] {
                    guard let value = mail[field] as? String else { continue }
                    let words = value.split(whereSeparator: { $0.isWhitespace || $0 == "\"" || $0 == "<" || $0 == ">" })
                    for word in words where word.contains("mode=revertSecondFactorAddition") {
                        if let code = URLComponents(string: String(word))?.queryItems?.first(where: { $0.name == "oobCode" })?.value {
                            return code
                        }
                    }
                }
                return nil
            }
        }
    }

    // MARK: The reference

    @Test("B.11 reference: RFC 4226 Appendix D, RFC 6238 Appendix B (SHA-1, 8 and 6 digits), RFC 4648 §10 base32")
    func referenceVectors() {
        let seed = Array("12345678901234567890".utf8)
        let hotp = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, expected) in hotp.enumerated() {
            #expect(TOTPReference.hotp(secret: seed, counter: UInt64(counter)) == expected, "counter \(counter)")
        }
        let totp: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, expected) in totp {
            let date = Date(timeIntervalSince1970: TimeInterval(time))
            #expect(TOTPReference.code(secret: seed, at: date, digits: 8) == expected, "T = \(time)")
            #expect(TOTPReference.code(secret: seed, at: date) == String(expected.suffix(6)), "T = \(time), six digits")
        }
        let base32 = [
            ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ]
        for (plain, encoded) in base32 {
            #expect(TOTPReference.base32Decode(encoded) == Array(plain.utf8), "\(encoded)")
            let bare = encoded.replacingOccurrences(of: "=", with: "").lowercased()
            #expect(TOTPReference.base32Decode(bare) == Array(plain.utf8), "\(bare)")
        }
        #expect(TOTPReference.base32Decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ") == seed)
        #expect(TOTPReference.base32Decode("MZXW1") == nil)
        #expect(TOTPReference.code(secret: seed, at: Date(timeIntervalSince1970: 59)) == "287082")
    }

    // MARK: Enrolment

    @Test(
        "M1, M19, B.5, B.6, B.12: SMS enrolment of a recent verified user revokes the older sessions and mails a revert link, which checks and then removes the factor"
    )
    func smsEnrolmentAndRevert() async throws {
        try await Self.run { f in
            let email = "m1@example.com"
            let other = try await f.verifiedUser(email)
            let caller = try await f.api.signIn(email, Self.password)
            f.clock.advance(10)
            let number = "+15555550100"
            #expect(
                try await f.v2("mfaEnrollment:start", Self.smsStart(caller.idToken, "12")).errorMessage
                    == "INVALID_PHONE_NUMBER : Invalid format.")
            let started = try await f.v2("mfaEnrollment:start", Self.smsStart(caller.idToken, number))
            #expect(started.status == 200, "\(Self.text(started))")
            let sessionInfo = try #require((started.json["phoneSessionInfo"] as? [String: Any])?["sessionInfo"] as? String)
            func finalize(_ sessionInfo: String?, _ code: String?) async throws -> TestHTTPClient.Reply {
                try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(caller.idToken, sessionInfo, code))
            }
            #expect(try await finalize(nil, "123456").errorCode == "MISSING_SESSION_INFO")
            #expect(try await finalize(sessionInfo, nil).errorCode == "MISSING_CODE")
            #expect(try await finalize(sessionInfo, "654321").errorCode == "INVALID_CODE")
            var body = Self.smsFinalize(caller.idToken, sessionInfo, "123456")
            body["displayName"] = "Work phone"
            let enrolled = try await f.v2("mfaEnrollment:finalize", body)
            #expect(enrolled.status == 200, "\(Self.text(enrolled))")
            #expect(enrolled.string("refreshToken") != nil && enrolled.json["expiresIn"] == nil && enrolled.json["totpAuthInfo"] == nil)
            var session = Session(enrolled)
            session.localID = caller.localID
            let claims = Self.factorClaims(session)
            #expect(claims.kind == "phone" && claims.provider == "password")
            let enrollmentID = try #require(claims.id)
            #expect(Self.isUUIDv4(enrollmentID), "\(enrollmentID)")

            let looked = try await f.api.client("lookup", ["idToken": session.idToken])
            let listed = ((looked.json["users"] as? [[String: Any]])?.first?["mfaInfo"] as? [[String: Any]]) ?? []
            #expect(listed.count == 1)
            #expect(listed.first?["mfaEnrollmentId"] as? String == enrollmentID)
            #expect(listed.first?["phoneInfo"] as? String == number && listed.first?["displayName"] as? String == "Work phone")
            #expect(Self.isMicroseconds(listed.first?["enrolledAt"] as? String))
            #expect(listed.first?["unobfuscatedPhoneInfo"] == nil)

            // All of the user's older sessions are revoked; the replacement refreshes.
            #expect(try await f.api.refresh(other.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await f.api.refresh(caller.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await f.api.refresh(session.refreshToken).status == 200)

            // The number is a factor now: a new start, and the spent session, say so.
            #expect(
                try await f.v2("mfaEnrollment:start", Self.smsStart(session.idToken, number)).errorMessage
                    == "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account.")
            #expect(
                try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(session.idToken, sessionInfo, "123456")).errorCode
                    == "SECOND_FACTOR_EXISTS")

            // M1: the notice carries a revert link. M19: checking it applies nothing; applying removes the factor.
            try await waitFor("the enrolment notice reaches \(email)") { !f.revertCodes(mailedTo: email).isEmpty }
            let code = try #require(f.revertCodes(mailedTo: email).last)
            let checked = try await f.api.client("resetPassword", ["oobCode": code])
            #expect(checked.status == 200, "\(Self.text(checked))")
            #expect(checked.string("requestType") == "REVERT_SECOND_FACTOR_ADDITION" && checked.string("email") == email)
            let info = checked.json["mfaInfo"] as? [String: Any]
            #expect(info?["mfaEnrollmentId"] as? String == enrollmentID && info?["phoneInfo"] as? String == "+*******0100")
            #expect(try await f.factors(caller.localID).count == 1, "checking applies nothing")
            let applied = try await f.api.client("update", ["oobCode": code])
            #expect(applied.status == 200, "\(Self.text(applied))")
            #expect(try await f.factors(caller.localID).isEmpty)
            #expect(try await f.api.refresh(session.refreshToken).errorCode == "TOKEN_EXPIRED", "every session is revoked")
            #expect(try await f.api.client("update", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
            // The password is unchanged, and the account, without factors, signs in at once.
            let after = try await f.signInWithPassword(email)
            #expect(after.status == 200 && after.string("idToken") != nil && after.json["mfaPendingCredential"] == nil)
        }
    }

    @Test(
        "M2, B.5 steps 6–8, attack: unverified, anonymous and phone sessions cannot enrol, nor one 330 s old (240 s is recent enough)"
    )
    func whoMayEnrol() async throws {
        try await Self.run(configure: { $0.accounts.allowAnonymous = true }) { f in
            let unverified = try await f.api.signUp("m2-unverified@example.com", Self.password)
            for body in [Self.totpStart(unverified.idToken), Self.smsStart(unverified.idToken, "+15555550101")] {
                #expect(
                    try await f.v2("mfaEnrollment:start", body).errorMessage
                        == "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
            }
            let anonymous = Session(try await f.api.client("signUp", ["returnSecureToken": true]))
            #expect(!anonymous.idToken.isEmpty)
            for body in [Self.totpStart(anonymous.idToken), Self.smsStart(anonymous.idToken, "+15555550101")] {
                #expect(try await f.v2("mfaEnrollment:start", body).errorMessage == Self.unsupportedFirstFactor, "anonymous")
            }
            let sent = try await f.api.client("sendVerificationCode", ["phoneNumber": "+15555550105"])
            let phoneSessionInfo = try #require(sent.string("sessionInfo"), "\(Self.text(sent))")
            let phone = Session(try await f.api.client("signInWithPhoneNumber", ["sessionInfo": phoneSessionInfo, "code": "123461"]))
            #expect(!phone.idToken.isEmpty)
            for body in [Self.totpStart(phone.idToken), Self.smsStart(phone.idToken, "+15555550101")] {
                #expect(try await f.v2("mfaEnrollment:start", body).errorMessage == Self.unsupportedFirstFactor, "phone")
            }

            let user = try await f.verifiedUser("m2@example.com")
            f.clock.advance(240)
            #expect(try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken)).status == 200, "240 s is recent")
            f.clock.advance(90)
            for body in [Self.totpStart(user.idToken), Self.smsStart(user.idToken, "+15555550101")] {
                #expect(try await f.v2("mfaEnrollment:start", body).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            }
            let fresh = try await f.api.signIn("m2@example.com", Self.password)
            #expect(try await f.v2("mfaEnrollment:start", Self.smsStart(fresh.idToken, "+15555550101")).status == 200)
        }
    }

    @Test(
        "M3, B.1, B.5 steps 2–5, 0.1, 0.4: kinds off answer OPERATION_NOT_ALLOWED before the token, both infos the exact oneof message, no info the proto refusal, all in the v2 shape; mfa config checks"
    )
    func kindsAndOrder() async throws {
        try await Self.run(mfa: false) { f in
            let user = try await f.verifiedUser("m3@example.com")
            let sms = Self.smsStart(user.idToken, "+15555550100")
            let totp = Self.totpStart(user.idToken)
            var both = sms
            both["totpEnrollmentInfo"] = [String: String]()

            let smsRefused = try await f.v2("mfaEnrollment:start", sms)
            #expect(smsRefused.errorMessage == Self.smsOff)
            Self.expectV2Shape(smsRefused)
            #expect(try await f.v2("mfaEnrollment:start", totp).errorMessage == Self.totpOff)
            #expect(
                try await f.v2("mfaEnrollment:start", ["totpEnrollmentInfo": [String: String]()]).errorMessage == Self.totpOff,
                "the kind is checked before the token")
            let oneof = try await f.v2("mfaEnrollment:start", both)
            #expect(
                oneof.errorMessage
                    == "Invalid value (oneof), oneof field 'enrollment_info' is already set. Cannot set 'phoneEnrollmentInfo'")
            Self.expectV2Shape(oneof)
            // The other routes of a kind that is off.
            #expect(
                try await f.v2("mfaEnrollment:finalize", Self.totpFinalize(user.idToken, "x", "x", "123456")).errorMessage == Self.totpOff)
            #expect(try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(user.idToken, "x", "123456")).errorMessage == Self.smsOff)
            #expect(
                try await f.v2(
                    "mfaSignIn:start", ["mfaPendingCredential": "x", "mfaEnrollmentId": "y", "phoneSignInInfo": [String: String]()]
                ).errorMessage == Self.smsOff)
            #expect(try await f.finalizeTOTP("x", "y", "123456").errorMessage == Self.totpOff)
            #expect(try await f.finalizeSMS("x", "x", "123456").errorMessage == Self.smsOff)

            // 0.4 and B.1: the configuration's own checks.
            #expect(
                try await f.patchMFA(Self.mfaConfig(adjacentIntervals: 11)).errorMessage
                    == "INVALID_ADJACENT_INTERVAL_RANGE : Allowed number of adjacent intervals must be between 0 and 10, inclusive")
            #expect(
                try await f.patchMFA(["mfa": ["state": "ON"]]).errorMessage
                    == "Invalid value at 'config.mfa.state' (type.googleapis.com/google.cloud.identitytoolkit.admin.v2.MultiFactorAuthConfig.State), \"ON\""
            )
            // TOTP given without its window, SMS not listed: the window is 5 and only TOTP enrols.
            let totpOnly = try await f.patchMFA(Self.mfaConfig(sms: false, adjacentIntervals: nil))
            #expect(totpOnly.status == 200, "\(Self.text(totpOnly))")
            let echoed = ((totpOnly.json["mfa"] as? [String: Any])?["providerConfigs"] as? [[String: Any]])?.first
            #expect((echoed?["totpProviderConfig"] as? [String: Any])?["adjacentIntervals"] as? Int == 5)
            #expect(try await f.v2("mfaEnrollment:start", sms).errorMessage == Self.smsOff)
            #expect(try await f.v2("mfaEnrollment:start", totp).status == 200)
            // MANDATORY behaves as ENABLED (decision 3).
            try await f.setMFA(state: "MANDATORY")
            #expect(try await f.v2("mfaEnrollment:start", sms).status == 200)

            // B.5 steps 4, 5 and 10, B.6 step 2, B.7's first checks.
            #expect(try await f.v2("mfaEnrollment:start", ["totpEnrollmentInfo": [String: String]()]).errorCode == "INVALID_ID_TOKEN")
            #expect(
                try await f.v2("mfaEnrollment:start", ["idToken": "not-a-token", "totpEnrollmentInfo": [String: String]()]).errorCode
                    == "INVALID_ID_TOKEN")
            let neither = try await f.v2("mfaEnrollment:start", ["idToken": user.idToken])
            #expect(neither.errorMessage == Self.invalidArgument)
            Self.expectV2Shape(neither)
            #expect(
                try await f.v2("mfaEnrollment:start", Self.smsStart(user.idToken, "not a number")).errorMessage
                    == "INVALID_PHONE_NUMBER : Invalid format.")
            #expect(
                try await f.v2("mfaEnrollment:finalize", ["idToken": user.idToken, "displayName": "x"]).errorMessage
                    == Self.invalidArgument)
            #expect(try await f.v2("mfaEnrollment:withdraw", ["mfaEnrollmentId": "x"]).errorCode == "INVALID_ID_TOKEN")
            #expect(try await f.v2("mfaEnrollment:withdraw", ["idToken": user.idToken]).errorCode == "MFA_ENROLLMENT_NOT_FOUND")
        }
    }

    @Test(
        "M4, B.5, B.6 step 4: TOTP start answers a base32 secret, 6, SHA1, 30 and now+900 s; finalize wants a name, the right code, and runs once; five wrong codes kill it"
    )
    func totpEnrolment() async throws {
        try await Self.run { f in
            let user = try await f.verifiedUser("m4@example.com")
            let started = try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken))
            #expect(started.status == 200, "\(Self.text(started))")
            let info = try #require(started.json["totpSessionInfo"] as? [String: Any])
            let key = try #require(info["sharedSecretKey"] as? String)
            #expect(key.count == 32 && key.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) }, "base32, no padding: \(key)")
            let secret = try #require(TOTPReference.base32Decode(key))
            #expect(secret.count == 20)
            #expect(info["verificationCodeLength"] as? Int == 6)
            #expect(info["hashingAlgorithm"] as? String == "SHA1")
            #expect(info["periodSec"] as? Int == 30)
            let sessionInfo = try #require(info["sessionInfo"] as? String)
            let finalizeBy = try #require(Self.instant(info["finalizeEnrollmentTime"] as? String))
            #expect(abs(finalizeBy.timeIntervalSince(f.clock.now()) - 900) < 1)
            #expect(Self.isMicroseconds(info["finalizeEnrollmentTime"] as? String))

            let right = TOTPReference.code(secret: secret, step: f.step)
            let wrong = TOTPReference.wrongCode(secret: secret, near: f.step)
            func finalize(_ name: String?, _ code: String?, in session: String?) async throws -> TestHTTPClient.Reply {
                try await f.v2("mfaEnrollment:finalize", Self.totpFinalize(user.idToken, name, session, code))
            }
            let missingName = "MISSING_DISPLAY_NAME : display name cannot be empty"
            #expect(try await finalize(nil, right, in: sessionInfo).errorMessage == missingName)
            #expect(try await finalize("", right, in: sessionInfo).errorMessage == missingName)
            #expect(try await finalize(nil, nil, in: sessionInfo).errorMessage == missingName, "correction 1: the name before the code")
            #expect(try await finalize("Authenticator", nil, in: sessionInfo).errorMessage == Self.invalidArgument)
            #expect(try await finalize("Authenticator", right, in: nil).errorCode == "INVALID_SESSION_INFO")
            #expect(try await finalize("Authenticator", right, in: "bm90LWEtc2Vzc2lvbg").errorCode == "INVALID_SESSION_INFO")
            #expect(try await finalize("Authenticator", wrong, in: sessionInfo).errorCode == "INVALID_CODE")
            #expect(
                try await finalize("Authenticator", String(right.prefix(5)), in: sessionInfo).errorCode == "INVALID_CODE",
                "six digits or nothing")
            let enrolled = try await finalize("Authenticator", right, in: sessionInfo)
            #expect(enrolled.status == 200, "\(Self.text(enrolled))")
            #expect((enrolled.json["totpAuthInfo"] as? [String: Any])?.isEmpty == true)
            #expect(enrolled.string("idToken") != nil && enrolled.string("refreshToken") != nil && enrolled.json["expiresIn"] == nil)
            let claims = Self.factorClaims(Session(enrolled))
            #expect(claims.kind == "totp" && Self.isUUIDv4(claims.id))
            // The enrolment revoked the token that started it (§B.6, stricter than production), so
            // the replay comes with the new session's.
            #expect(try await finalize("Authenticator", right, in: sessionInfo).errorCode == "TOKEN_EXPIRED")
            let replayed = try await f.v2(
                "mfaEnrollment:finalize", Self.totpFinalize(Session(enrolled).idToken, "Authenticator", sessionInfo, right))
            #expect(replayed.errorMessage == "TOO_MANY_ENROLLMENT_ATTEMPTS : restart enrollment")
            let listed = try await f.factors(user.localID)
            #expect(listed.count == 1)
            #expect(listed.first?["mfaEnrollmentId"] as? String == claims.id && listed.first?["displayName"] as? String == "Authenticator")
            #expect((listed.first?["totpInfo"] as? [String: Any])?.isEmpty == true && listed.first?["phoneInfo"] == nil)

            // Five wrong codes kill an enrolment: the right code then restarts nothing.
            let second = try await f.verifiedUser("m4b@example.com")
            let (secondSecret, secondSession) = try await f.startTOTP(second.idToken)
            for index in 0..<5 {
                let guess = TOTPReference.wrongCode(secret: secondSecret, near: f.step, index: index)
                #expect(
                    try await f.v2("mfaEnrollment:finalize", Self.totpFinalize(second.idToken, "A", secondSession, guess)).errorCode
                        == "INVALID_CODE")
            }
            let killed = try await f.v2(
                "mfaEnrollment:finalize",
                Self.totpFinalize(second.idToken, "A", secondSession, TOTPReference.code(secret: secondSecret, step: f.step)))
            #expect(killed.errorMessage == "TOO_MANY_ENROLLMENT_ATTEMPTS : restart enrollment")
            #expect(try await f.factors(second.localID).isEmpty)
        }
    }

    @Test(
        "M5, B.6: a TOTP enrolment is refused at 930 s (SESSION_EXPIRED) and finalized at 870 s by a token no longer recent; a second TOTP factor is refused"
    )
    func totpEnrolmentLifetime() async throws {
        try await Self.run { f in
            let user = try await f.verifiedUser("m5@example.com")
            let (expiredSecret, expiredSession) = try await f.startTOTP(user.idToken)
            f.clock.advance(930)
            let late = try await f.v2(
                "mfaEnrollment:finalize",
                Self.totpFinalize(user.idToken, "Authenticator", expiredSession, TOTPReference.code(secret: expiredSecret, step: f.step)))
            #expect(late.errorCode == "SESSION_EXPIRED", "\(Self.text(late))")

            let fresh = try await f.api.signIn("m5@example.com", Self.password)
            let (secret, sessionInfo) = try await f.startTOTP(fresh.idToken)
            f.clock.advance(870)
            let enrolled = try await f.v2(
                "mfaEnrollment:finalize",
                Self.totpFinalize(fresh.idToken, "Authenticator", sessionInfo, TOTPReference.code(secret: secret, step: f.step)))
            #expect(enrolled.status == 200, "870 s, and the finalize token need not be recent: \(Self.text(enrolled))")
            let replacement = Session(enrolled)
            #expect(
                try await f.v2("mfaEnrollment:start", Self.totpStart(replacement.idToken)).errorMessage
                    == "SECOND_FACTOR_LIMIT_EXCEEDED : Too many TOTP based second factors enrolled for this account.")
            #expect(try await f.v2("mfaEnrollment:start", Self.smsStart(replacement.idToken, "+15555550100")).status == 200)
        }
    }

    @Test(
        "M6, B.5 step 9, B.6 step 5: five factors at most: a sixth phone or a TOTP is refused at start, and at finalize when the fifth came meanwhile"
    )
    func factorLimit() async throws {
        try await Self.run { f in
            let user = try await f.verifiedUser("m6@example.com")
            func phones(_ count: Int) -> [String: any Sendable] {
                let enrollments = (0..<count).map { index -> [String: any Sendable] in
                    ["phoneInfo": "+1555555011\(index)", "displayName": "Phone \(index)"]
                }
                return ["localId": user.localID, "mfa": ["enrollments": enrollments]]
            }
            #expect(try await f.api.admin("update", phones(4)).status == 200)
            let (secret, sessionInfo) = try await f.startTOTP(user.idToken)
            #expect(try await f.api.admin("update", phones(5)).status == 200)
            let late = try await f.v2(
                "mfaEnrollment:finalize",
                Self.totpFinalize(user.idToken, "Authenticator", sessionInfo, TOTPReference.code(secret: secret, step: f.step)))
            #expect(late.errorCode == "SECOND_FACTOR_LIMIT_EXCEEDED", "\(Self.text(late))")
            #expect(try await f.v2("mfaEnrollment:start", Self.smsStart(user.idToken, "+15555550100")).errorMessage == Self.tooManyFactors)
            #expect(try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken)).errorMessage == Self.tooManyFactors)
            #expect(try await f.api.admin("update", phones(6)).errorCode == "SECOND_FACTOR_LIMIT_EXCEEDED")
            #expect(try await f.factors(user.localID).count == 5)
        }
    }

    // MARK: Sign-in

    @Test(
        "M7, B.2, B.3: a challenged password or email-link sign-in answers a pending credential and the obfuscated factors, no tokens, no session; lastLoginAt moves only at the second step"
    )
    func pendingResponse() async throws {
        try await Self.run { f in
            let email = "m7@example.com"
            let user = try await f.verifiedUser(email)
            let (afterPhone, phoneID) = try await f.enrollPhone(user, "+15555550100", displayName: "Work phone")
            let factor = try await f.enrollTOTP(afterPhone, displayName: "Authenticator")
            let lastLogin = try #require(try await f.user(user.localID)?["lastLoginAt"] as? String)
            let sessions = try await TakeoverTests.count("SELECT count(*)::int FROM sessions", f.database)
            f.clock.advance(10)

            let reply = try await f.signInWithPassword(email)
            #expect(reply.status == 200, "\(Self.text(reply))")
            for token in ["idToken", "refreshToken", "expiresIn"] { #expect(reply.json[token] == nil, "\(token)") }
            #expect(reply.string("kind") == "identitytoolkit#VerifyPasswordResponse")
            #expect(reply.string("localId") == user.localID && reply.string("email") == email)
            #expect(reply.string("displayName") == "" && reply.json["registered"] as? Bool == true)
            let credential = try #require(reply.string("mfaPendingCredential"))
            #expect(credential.count == 43 && TestBase64URL.decode(credential)?.count == 32, "32 random bytes, base64url (0.2)")
            let hints = try #require(reply.json["mfaInfo"] as? [[String: Any]])
            #expect(hints.count == 2)
            let phoneHint = hints.first { $0["mfaEnrollmentId"] as? String == phoneID }
            #expect(phoneHint?["phoneInfo"] as? String == "+*******0100" && phoneHint?["displayName"] as? String == "Work phone")
            #expect(phoneHint?["totpInfo"] == nil)
            let totpHint = hints.first { $0["mfaEnrollmentId"] as? String == factor.enrollmentID }
            #expect((totpHint?["totpInfo"] as? [String: Any])?.isEmpty == true && totpHint?["phoneInfo"] == nil)
            #expect(totpHint?["displayName"] as? String == "Authenticator")
            let allowed: Set<String> = ["mfaEnrollmentId", "displayName", "enrolledAt", "phoneInfo", "totpInfo"]
            for hint in hints { #expect(Set(hint.keys).isSubset(of: allowed), "\(hint.keys.sorted())") }
            #expect(try await f.user(user.localID)?["lastLoginAt"] as? String == lastLogin)
            #expect(try await TakeoverTests.count("SELECT count(*)::int FROM sessions", f.database) == sessions, "no session")

            // lookup lists the factors unobfuscated, with microseconds, and nothing secret.
            let looked = try await f.api.client("lookup", ["idToken": factor.session.idToken])
            let listed = ((looked.json["users"] as? [[String: Any]])?.first?["mfaInfo"] as? [[String: Any]]) ?? []
            #expect(listed.count == 2)
            #expect(listed.first { $0["mfaEnrollmentId"] as? String == phoneID }?["phoneInfo"] as? String == "+15555550100")
            for entry in listed {
                #expect(Set(entry.keys).isSubset(of: allowed), "\(entry.keys.sorted())")
                #expect((entry["phoneInfo"] == nil) != (entry["totpInfo"] == nil), "exactly one of phoneInfo and totpInfo")
                #expect(Self.isMicroseconds(entry["enrolledAt"] as? String))
            }

            // An email link of the verified owner is challenged the same way, and its code is spent.
            let code = try await EmailActionsTests.signInCode(f.api, email)
            let linked = try await f.api.client("signInWithEmailLink", ["email": email, "oobCode": code])
            #expect(linked.status == 200, "\(Self.text(linked))")
            #expect(linked.string("kind") == "identitytoolkit#EmailLinkSigninResponse")
            #expect(linked.json["idToken"] == nil && linked.json["refreshToken"] == nil)
            let linkCredential = try #require(linked.string("mfaPendingCredential"))
            #expect((linked.json["mfaInfo"] as? [[String: Any]])?.count == 2)
            #expect(try await f.api.client("signInWithEmailLink", ["email": email, "oobCode": code]).errorCode == "INVALID_OOB_CODE")
            #expect(try await f.user(user.localID)?["lastLoginAt"] as? String == lastLogin)

            f.clock.advance(30)
            let completed = try await f.finalizeTOTP(
                linkCredential, factor.enrollmentID, TOTPReference.code(secret: factor.secret, step: f.step))
            #expect(completed.status == 200, "\(Self.text(completed))")
            #expect(Self.factorClaims(Session(completed)).kind == "totp")
            #expect(try await f.user(user.localID)?["lastLoginAt"] as? String != lastLogin, "the second step signs in")
        }
    }

    @Test(
        "M8, B.11: with w = 5 codes of T−5 … T+5 newer than the last used step pass; T−6, T+6, a replayed code and an older one are INVALID_CODE"
    )
    func totpWindow() async throws {
        try await Self.run { f in
            let email = "m8@example.com"
            let factor = try await f.enrollTOTP(try await f.verifiedUser(email))
            // The factor's last step is the enrolment's, T − 10.
            f.clock.advance(300)
            let now = f.step
            func code(_ step: Int64) -> String { TOTPReference.code(secret: factor.secret, step: step) }

            let first = try await f.challenge(email)
            #expect(try await f.finalizeTOTP(first, factor.enrollmentID, code(now - 6)).errorCode == "INVALID_CODE", "T−6")
            let passed = try await f.finalizeTOTP(first, factor.enrollmentID, code(now - 5))
            #expect(passed.status == 200, "T−5: \(Self.text(passed))")
            let claims = Self.factorClaims(Session(passed))
            #expect(claims.kind == "totp" && claims.id == factor.enrollmentID && claims.provider == "password")

            let second = try await f.challenge(email)
            #expect(try await f.finalizeTOTP(second, factor.enrollmentID, code(now)).status == 200, "T")

            let third = try await f.challenge(email)
            #expect(try await f.finalizeTOTP(third, factor.enrollmentID, code(now)).errorCode == "INVALID_CODE", "T again: a replay")
            #expect(
                try await f.finalizeTOTP(third, factor.enrollmentID, code(now - 1)).errorCode == "INVALID_CODE", "older than the last step")
            #expect(try await f.finalizeTOTP(third, factor.enrollmentID, code(now + 6)).errorCode == "INVALID_CODE", "T+6")
            #expect(try await f.finalizeTOTP(third, factor.enrollmentID, code(now + 5)).status == 200, "T+5")
        }
    }

    @Test(
        "M9, B.4, B.9: TOTP answers within 300 s of the first factor (290 s passes), a credential expires at 600 s, and wrong codes across two credentials exhaust the factor's quota until it refills"
    )
    func totpTimingAndQuota() async throws {
        try await Self.run { f in
            let email = "m9@example.com"
            let factor = try await f.enrollTOTP(try await f.verifiedUser(email))
            func current() -> String { TOTPReference.code(secret: factor.secret, step: f.step) }
            f.clock.advance(30)
            let first = try await f.challenge(email)
            f.clock.advance(290)
            #expect(try await f.finalizeTOTP(first, factor.enrollmentID, current()).status == 200, "290 s")

            let second = try await f.challenge(email)
            f.clock.advance(300)
            #expect(
                try await f.finalizeTOTP(second, factor.enrollmentID, current()).errorMessage
                    == "TOTP_CHALLENGE_TIMEOUT : TOTP challenge timeout, provide first factor again.")
            f.clock.advance(301)
            #expect(
                try await f.finalizeTOTP(second, factor.enrollmentID, current()).errorMessage
                    == "INVALID_MFA_PENDING_CREDENTIAL : MFA pending credential is expired.")

            func guess(_ index: Int) -> String { TOTPReference.wrongCode(secret: factor.secret, near: f.step, index: index) }
            let third = try await f.challenge(email)
            for index in 0..<3 { #expect(try await f.finalizeTOTP(third, factor.enrollmentID, guess(index)).errorCode == "INVALID_CODE") }
            let fourth = try await f.challenge(email)
            for index in 3..<5 { #expect(try await f.finalizeTOTP(fourth, factor.enrollmentID, guess(index)).errorCode == "INVALID_CODE") }
            #expect(try await f.finalizeTOTP(fourth, factor.enrollmentID, guess(5)).errorMessage == Self.quotaExceeded, "the sixth")
            #expect(
                try await f.finalizeTOTP(fourth, factor.enrollmentID, current()).errorMessage == Self.quotaExceeded, "even the right code")
            f.clock.advance(600)
            let fifth = try await f.challenge(email)
            #expect(try await f.finalizeTOTP(fifth, factor.enrollmentID, current()).status == 200, "one guess back after ten minutes")
        }
    }

    @Test(
        "M10, B.8, B.9, attack: a spent pending credential replayed, an unknown one, another user's factors; the SMS second step's refusals in order"
    )
    func pendingCredentialRefusals() async throws {
        try await Self.run { f in
            let alice = try await f.verifiedUser("m10a@example.com")
            let (_, alicePhone) = try await f.enrollPhone(alice, "+15555550100")
            let bob = try await f.verifiedUser("m10b@example.com")
            let (bobAfterPhone, bobPhone) = try await f.enrollPhone(bob, "+15555550101")
            let bobTOTP = try await f.enrollTOTP(bobAfterPhone)

            let pending = try await f.challenge("m10a@example.com")
            let sessionInfo = try await f.startSMS(pending, alicePhone)
            #expect(try await f.finalizeSMS(pending, nil, "123456").errorCode == "MISSING_SESSION_INFO")
            #expect(try await f.finalizeSMS(pending, sessionInfo, nil).errorCode == "MISSING_CODE")
            #expect(try await f.finalizeSMS(pending, sessionInfo, "654321").errorCode == "INVALID_CODE")
            let signedIn = try await f.finalizeSMS(pending, sessionInfo, "123456")
            #expect(signedIn.status == 200, "\(Self.text(signedIn))")
            let claims = Self.factorClaims(Session(signedIn))
            #expect(claims.kind == "phone" && claims.id == alicePhone && claims.provider == "password")
            #expect(try await f.finalizeSMS(pending, sessionInfo, "123456").errorCode == "INVALID_PENDING_TOKEN", "replayed verbatim")

            let unknown = TestBase64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
            #expect(try await f.finalizeTOTP(unknown, bobTOTP.enrollmentID, "123456").errorCode == "INVALID_PENDING_TOKEN")
            #expect(try await f.startSMSReply(unknown, alicePhone).errorCode == "INVALID_PENDING_TOKEN")

            let again = try await f.challenge("m10a@example.com")
            let bobCode = TOTPReference.code(secret: bobTOTP.secret, step: f.step + 1)
            #expect(try await f.finalizeTOTP(again, bobTOTP.enrollmentID, bobCode).errorCode == "INVALID_MFA_ENROLLMENT_ID", "Bob's TOTP")
            #expect(try await f.finalizeTOTP(again, alicePhone, "123456").errorCode == "INVALID_MFA_ENROLLMENT_ID", "a phone factor")
            func start(_ credential: String?, _ enrollmentID: String?, info: Bool = true) async throws -> TestHTTPClient.Reply {
                var body: [String: any Sendable] = [:]
                if let credential { body["mfaPendingCredential"] = credential }
                if let enrollmentID { body["mfaEnrollmentId"] = enrollmentID }
                if info { body["phoneSignInInfo"] = [String: String]() }
                return try await f.v2("mfaSignIn:start", body)
            }
            #expect(try await start(again, bobPhone).errorCode == "MFA_ENROLLMENT_NOT_FOUND", "Bob's phone")
            #expect(
                try await start(nil, alicePhone).errorMessage
                    == "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
            #expect(try await start(again, nil).errorMessage == Self.invalidArgument)
            #expect(
                try await start(again, alicePhone, info: false).errorMessage == Self.invalidArgument, "correction 2: no phoneSignInInfo")

            let bobPending = try await f.challenge("m10b@example.com")
            #expect(
                try await start(bobPending, bobTOTP.enrollmentID).errorMessage == "INVALID_PHONE_NUMBER : Invalid format.",
                "correction 2: a TOTP factor with phoneSignInInfo")
            #expect(try await start(bobPending, bobTOTP.enrollmentID, info: false).errorMessage == Self.invalidArgument)
            // B.9 steps 1–3.
            let totpInfo: [String: any Sendable] = ["verificationCode": bobCode]
            let noCredential: [String: any Sendable] = ["mfaEnrollmentId": bobTOTP.enrollmentID, "totpVerificationInfo": totpInfo]
            #expect(try await f.v2("mfaSignIn:finalize", noCredential).errorMessage == Self.invalidArgument)
            let noEnrollment: [String: any Sendable] = ["mfaPendingCredential": bobPending, "totpVerificationInfo": totpInfo]
            #expect(try await f.v2("mfaSignIn:finalize", noEnrollment).errorMessage == Self.invalidArgument)
            let noCode: [String: any Sendable] = [
                "mfaPendingCredential": bobPending, "mfaEnrollmentId": bobTOTP.enrollmentID, "totpVerificationInfo": [String: String](),
            ]
            #expect(try await f.v2("mfaSignIn:finalize", noCode).errorMessage == Self.invalidArgument)
            let both = try await f.v2(
                "mfaSignIn:finalize",
                [
                    "mfaPendingCredential": bobPending, "mfaEnrollmentId": bobTOTP.enrollmentID,
                    "totpVerificationInfo": ["verificationCode": bobCode], "phoneVerificationInfo": ["sessionInfo": "x", "code": "123457"],
                ])
            #expect(
                both.errorMessage?.hasPrefix("Invalid value (oneof), oneof field 'enrollment_info' is already set. Cannot set '") == true,
                "\(Self.text(both))")
            // None of that spent Bob's credential.
            f.clock.advance(30)
            #expect(try await f.finalizeTOTP(bobPending, bobTOTP.enrollmentID, bobCode).status == 200)
        }
    }

    @Test(
        "M11, B.4, B.12, attack: a pending credential dies with a password change, a reset and a revoke-all, and refuses a disabled user; the factor stays"
    )
    func pendingCredentialInvalidation() async throws {
        try await Self.run { f in
            let email = "m11@example.com"
            let user = try await f.verifiedUser(email)
            let factor = try await f.enrollTOTP(user)
            f.clock.advance(30)
            let code = TOTPReference.code(secret: factor.secret, step: f.step)

            let beforeChange = try await f.challenge(email)
            let changed = try await f.api.client(
                "update", ["idToken": factor.session.idToken, "password": "changed-pass-1", "returnSecureToken": true])
            #expect(changed.status == 200, "\(Self.text(changed))")
            let kept = Self.factorClaims(Session(changed))
            #expect(kept.kind == "totp" && kept.id == factor.enrollmentID, "the caller's replacement keeps its 2FA claims")
            #expect(
                try await f.finalizeTOTP(beforeChange, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN", "password change")

            let beforeReset = try await f.challenge(email, "changed-pass-1")
            let reset = try await ActionHandlerTests.link(f.api, "PASSWORD_RESET", email).code
            #expect(try await f.api.client("resetPassword", ["oobCode": reset, "newPassword": "reset-pass-2"]).status == 200)
            #expect(try await f.finalizeTOTP(beforeReset, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN", "password reset")

            let beforeRevoke = try await f.challenge(email, "reset-pass-2")
            f.clock.advance(1)
            let validSince = String(Int(f.clock.now().timeIntervalSince1970))
            #expect(try await f.api.admin("update", ["localId": user.localID, "validSince": validSince]).status == 200)
            #expect(try await f.finalizeTOTP(beforeRevoke, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN", "revoke-all")

            let beforeDisable = try await f.challenge(email, "reset-pass-2")
            #expect(try await f.api.admin("update", ["localId": user.localID, "disableUser": true]).status == 200)
            #expect(try await f.finalizeTOTP(beforeDisable, factor.enrollmentID, code).errorCode == "USER_DISABLED")
            #expect(try await f.api.admin("update", ["localId": user.localID, "disableUser": false]).status == 200)
            #expect(
                try await f.finalizeTOTP(beforeDisable, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN",
                "disabling moved the credential version (0.3)")

            let fresh = try await f.challenge(email, "reset-pass-2")
            #expect(try await f.finalizeTOTP(fresh, factor.enrollmentID, code).status == 200, "the factor outlived all of it")
        }
    }

    @Test("M12, B.10: the second factor's claims survive refreshes and session cookies; sign_in_provider stays the first factor's")
    func claimsPersist() async throws {
        try await Self.run { f in
            let email = "m12@example.com"
            let (afterPhone, phoneID) = try await f.enrollPhone(try await f.verifiedUser(email), "+15555550100")
            let factor = try await f.enrollTOTP(afterPhone)
            f.clock.advance(30)
            let totp = try await f.finalizeTOTP(
                try await f.challenge(email), factor.enrollmentID, TOTPReference.code(secret: factor.secret, step: f.step))
            #expect(totp.status == 200, "\(Self.text(totp))")
            let sms = try await f.smsSignIn(try await f.challenge(email), phoneID, code: "123456")
            #expect(sms.status == 200, "\(Self.text(sms))")
            let cases: [(Session, String, String)] = [
                (Session(totp), "totp", factor.enrollmentID), (Session(sms), "phone", phoneID),
                (factor.session, "totp", factor.enrollmentID),
            ]
            for (session, kind, id) in cases {
                let signedIn = Self.factorClaims(session)
                #expect(signedIn.kind == kind && signedIn.id == id && signedIn.provider == "password", "\(kind)")
                f.clock.advance(5)
                let refreshed = try await f.api.refresh(session.refreshToken)
                #expect(refreshed.status == 200, "\(Self.text(refreshed))")
                let afterRefresh = Self.factorClaims(Session(refreshed))
                #expect(afterRefresh.kind == kind && afterRefresh.id == id && afterRefresh.provider == "password", "\(kind), refreshed")
                let cookie = try await f.api.admin("createSessionCookie", ["idToken": session.idToken, "validDuration": "3600"])
                let value = try #require(cookie.string("sessionCookie"), "\(Self.text(cookie))")
                let inCookie = Self.factorClaims(Session(["idToken": value]))
                #expect(inCookie.kind == kind && inCookie.id == id && inCookie.provider == "password", "\(kind), session cookie")
            }
        }
    }

    // MARK: Withdrawal and other flows

    @Test(
        "M13, B.7: withdrawing revokes every session; the replacement keeps another factor's claims but not the withdrawn one's; unknown ids and stale sessions are refused"
    )
    func withdraw() async throws {
        try await Self.run { f in
            let email = "m13@example.com"
            let user = try await f.verifiedUser(email)
            let factor = try await f.enrollTOTP(user)
            let (afterPhone, phoneID) = try await f.enrollPhone(factor.session, "+15555550100")
            #expect(try await f.factors(user.localID).count == 2)

            // The session passed the phone; the TOTP factor goes and the phone's claims stay (correction 4).
            let first = try await f.v2("mfaEnrollment:withdraw", ["idToken": afterPhone.idToken, "mfaEnrollmentId": factor.enrollmentID])
            #expect(first.status == 200, "\(Self.text(first))")
            #expect(first.string("idToken") != nil && first.string("refreshToken") != nil)
            let kept = Self.factorClaims(Session(first))
            #expect(kept.kind == "phone" && kept.id == phoneID)
            #expect(try await f.api.refresh(afterPhone.refreshToken).errorCode == "TOKEN_EXPIRED")
            let listed = try await f.factors(user.localID)
            #expect(listed.count == 1 && listed.first?["mfaEnrollmentId"] as? String == phoneID)

            // The factor the session passed goes: the replacement has no second factor.
            let second = try await f.v2("mfaEnrollment:withdraw", ["idToken": Session(first).idToken, "mfaEnrollmentId": phoneID])
            #expect(second.status == 200, "\(Self.text(second))")
            let dropped = Self.factorClaims(Session(second))
            #expect(dropped.kind == nil && dropped.id == nil && dropped.provider == "password")
            #expect(try await f.api.refresh(Session(first).refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await f.api.client("lookup", ["idToken": Session(first).idToken]).errorCode == "TOKEN_EXPIRED")
            #expect(try await f.factors(user.localID).isEmpty)
            #expect(try await f.api.refresh(Session(second).refreshToken).status == 200)
            #expect(
                try await f.v2("mfaEnrollment:withdraw", ["idToken": Session(second).idToken, "mfaEnrollmentId": phoneID]).errorCode
                    == "MFA_ENROLLMENT_NOT_FOUND")
            try await waitFor("two withdrawal notices reach \(email)") {
                f.mails(to: email).filter { ($0["kind"] as? String)?.lowercased() == "mfa_withdrawn" }.count == 2
            }

            // Another user's factor is not found; a session 330 s old may not withdraw.
            let other = try await f.verifiedUser("m13b@example.com")
            let (otherSession, otherPhone) = try await f.enrollPhone(other, "+15555550101")
            #expect(
                try await f.v2("mfaEnrollment:withdraw", ["idToken": Session(second).idToken, "mfaEnrollmentId": otherPhone]).errorCode
                    == "MFA_ENROLLMENT_NOT_FOUND")
            f.clock.advance(330)
            #expect(
                try await f.v2("mfaEnrollment:withdraw", ["idToken": otherSession.idToken, "mfaEnrollmentId": otherPhone]).errorCode
                    == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(try await f.factors(other.localID).count == 1)
        }
    }

    @Test(
        "M14, B.1, B.3: a custom token signs a challenged user in without 2FA claims and cannot enrol; only factors of enabled kinds challenge; MFA off gives tokens"
    )
    func challengeDependsOnKinds() async throws {
        try await Self.run { f in
            let email = "m14@example.com"
            let user = try await f.verifiedUser(email)
            _ = try await f.enrollTOTP(user)
            let account = try ServiceAccount("m14")
            #expect(try await CustomTokenTests.register(f.api, account).status == 200)
            let custom = try await CustomTokenTests.exchange(f.api, try account.token(uid: user.localID, issuedAt: f.clock.now()))
            #expect(custom.status == 200, "\(Self.text(custom))")
            #expect(custom.string("idToken") != nil && custom.string("refreshToken") != nil && custom.json["mfaPendingCredential"] == nil)
            let claims = Self.factorClaims(Session(custom))
            #expect(claims.provider == "custom" && claims.kind == nil && claims.id == nil)
            #expect(
                try await f.v2("mfaEnrollment:start", Self.totpStart(Session(custom).idToken)).errorMessage == Self.unsupportedFirstFactor)

            func tokens() async throws -> Bool {
                let reply = try await f.signInWithPassword(email)
                return reply.status == 200 && reply.string("idToken") != nil && reply.json["mfaPendingCredential"] == nil
            }
            func challenged() async throws -> Bool {
                let reply = try await f.signInWithPassword(email)
                return reply.status == 200 && reply.string("mfaPendingCredential") != nil && reply.json["idToken"] == nil
            }
            #expect(try await challenged())
            try await f.setMFA(totp: false)
            #expect(try await tokens(), "the only factor is of a kind that is off")
            try await f.setMFA(state: "MANDATORY")
            #expect(try await challenged(), "MANDATORY behaves as ENABLED")
            try await f.setMFA(state: "DISABLED")
            #expect(try await tokens(), "MFA off")
            #expect(try await f.factors(user.localID).count == 1, "the factor is kept")
        }
    }

    @Test(
        "M15, B.12, attack: an email link to an unverified account with admin-made factors applies THE RULE: tokens, no factors, the squatter's pending credential dead"
    )
    func theRuleRemovesFactors() async throws {
        try await Self.run { f in
            let email = "m15@example.com"
            let created = try await f.api.admin(
                "signUp",
                ["email": email, "password": "squatter-pass", "mfaInfo": [["phoneInfo": "+15555550100", "displayName": "Phone"]]])
            #expect(created.status == 200, "\(Self.text(created))")
            let localID = try #require(created.string("localId"))
            let factorID = try #require(try await f.factors(localID).first?["mfaEnrollmentId"] as? String)
            let squatter = try await f.challenge(email, "squatter-pass")

            let code = try await EmailActionsTests.signInCode(f.api, email)
            let owner = try await f.api.client("signInWithEmailLink", ["email": email, "oobCode": code])
            #expect(owner.status == 200, "\(Self.text(owner))")
            #expect(owner.string("idToken") != nil && owner.json["mfaPendingCredential"] == nil && owner.json["mfaInfo"] == nil)
            let after = try await f.user(localID)
            #expect(after?["mfaInfo"] == nil && after?["emailVerified"] as? Bool == true)
            #expect(try await f.startSMSReply(squatter, factorID).errorCode == "INVALID_PENDING_TOKEN")
        }
    }

    @Test("M16, B.12: a user with factors changes email only through verification, which keeps the factors")
    func emailChangeWithFactors() async throws {
        try await Self.run { f in
            let email = "m16@example.com"
            let newEmail = "m16.new@example.com"
            let user = try await f.verifiedUser(email)
            let (session, _) = try await f.enrollPhone(user, "+15555550100")
            #expect(
                try await f.api.client("update", ["idToken": session.idToken, "email": newEmail, "returnSecureToken": true]).errorCode
                    == "EMAIL_CHANGE_NEEDS_VERIFICATION")
            #expect(try await f.user(user.localID)?["email"] as? String == email)
            let sent = try await f.api.client(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": session.idToken, "newEmail": newEmail])
            #expect(sent.status == 200, "\(Self.text(sent))")
            let code = try await ActionHandlerTests.link(f.api, "VERIFY_AND_CHANGE_EMAIL", email, ["newEmail": newEmail]).code
            #expect(try await f.api.client("update", ["oobCode": code]).status == 200)
            let after = try await f.user(user.localID)
            #expect(after?["email"] as? String == newEmail && after?["emailVerified"] as? Bool == true)
            #expect((after?["mfaInfo"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test(
        "M17, B.13: the Admin API's factors: ids provisioned, an existing TOTP kept by id with its secret, a new TOTP refused, bad phones, limits, clearing; pending credentials die, sessions do not"
    )
    func adminFactors() async throws {
        try await Self.run { f in
            let email = "m17@example.com"
            let user = try await f.verifiedUser(email)
            let factor = try await f.enrollTOTP(user)
            f.clock.advance(30)
            let code = TOTPReference.code(secret: factor.secret, step: f.step)
            let before = try await f.challenge(email)

            // Node's updateUser(uid, {multiFactor: {enrolledFactors: [the TOTP factor, {phoneNumber, factorId: 'phone'}]}}).
            let keep: [String: any Sendable] = ["mfaEnrollmentId": factor.enrollmentID, "totpInfo": [String: String]()]
            let phone: [String: any Sendable] = ["phoneInfo": "+15555550177", "displayName": "x"]
            func update(_ enrollments: [[String: any Sendable]]) async throws -> TestHTTPClient.Reply {
                try await f.api.admin("update", ["localId": user.localID, "mfa": ["enrollments": enrollments]])
            }
            let updated = try await update([keep, phone])
            #expect(updated.status == 200, "\(Self.text(updated))")
            let listed = try await f.factors(user.localID)
            #expect(listed.count == 2)
            let added = listed.first { $0["phoneInfo"] as? String == "+15555550177" }
            let provisioned = added?["mfaEnrollmentId"] as? String ?? ""
            #expect(!provisioned.isEmpty && provisioned != factor.enrollmentID && added?["displayName"] as? String == "x")
            #expect(listed.contains { $0["mfaEnrollmentId"] as? String == factor.enrollmentID && $0["totpInfo"] != nil })
            #expect(try await f.finalizeTOTP(before, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN")
            #expect(try await f.api.refresh(factor.session.refreshToken).status == 200, "an admin change revokes nothing")
            let after = try await f.challenge(email)
            #expect(try await f.finalizeTOTP(after, factor.enrollmentID, code).status == 200, "the kept TOTP factor kept its secret")

            #expect(
                try await update([keep, phone, ["totpInfo": [String: String]()]]).errorMessage
                    == "UNSUPPORTED_SECOND_FACTOR : attempting to add a new TOTP enrollment")
            #expect(try await update([["phoneInfo": "12"]]).errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
            let six = (0..<6).map { index -> [String: any Sendable] in ["phoneInfo": "+1555555012\(index)"] }
            #expect(try await update(six).errorCode == "SECOND_FACTOR_LIMIT_EXCEEDED")
            #expect(
                try await update([
                    ["mfaEnrollmentId": "same", "phoneInfo": "+15555550121"], ["mfaEnrollmentId": "same", "phoneInfo": "+15555550122"],
                ]).errorCode == "DUPLICATE_MFA_ENROLLMENT_ID")
            #expect(
                try await f.api.admin("update", ["localId": "no-such-user", "mfa": ["enrollments": [phone]]]).errorCode == "USER_NOT_FOUND")
            #expect(try await f.factors(user.localID).count == 2, "refused updates change nothing")
            #expect(try await update([["phoneInfo": "+15555550123"], ["phoneInfo": "+1 555 555 0123"]]).status == 200)
            #expect(try await f.factors(user.localID).count == 1, "the same phone twice is one factor")
            // enrolledFactors: null → mfa: {}.
            #expect(try await f.api.admin("update", ["localId": user.localID, "mfa": [String: String]()]).status == 200)
            #expect(try await f.factors(user.localID).isEmpty)

            // Create: ids given are ignored, TOTP and bad phones refused.
            #expect(
                try await f.api.admin("signUp", ["email": "m17b@example.com", "mfaInfo": [["totpInfo": [String: String]()]]]).errorMessage
                    == "UNSUPPORTED_SECOND_FACTOR : attempting to add a new TOTP enrollment")
            #expect(
                try await f.api.admin("signUp", ["email": "m17c@example.com", "mfaInfo": [["phoneInfo": "12"]]]).errorMessage
                    == "INVALID_PHONE_NUMBER : Invalid format.")
            let created = try await f.api.admin(
                "signUp", ["email": "m17d@example.com", "mfaInfo": [["phoneInfo": "+15555550124", "mfaEnrollmentId": "given"]]])
            let createdID = try #require(created.string("localId"), "\(Self.text(created))")
            let createdFactors = try await f.factors(createdID)
            #expect(createdFactors.count == 1 && createdFactors.first?["mfaEnrollmentId"] as? String != "given")
        }
    }

    @Test(
        "M18, B.13: an import refuses, per user, TOTP factors, unverified or missing emails, bad phones and repeated ids, and keeps a valid factor as given"
    )
    func importFactors() async throws {
        try await Self.run { f in
            func account(_ id: String, _ email: String?, verified: Bool, _ factors: [[String: any Sendable]]) -> [String: any Sendable] {
                var entry: [String: any Sendable] = ["localId": id, "mfaInfo": factors]
                if let email {
                    entry["email"] = email
                    entry["emailVerified"] = verified
                }
                return entry
            }
            let users: [[String: any Sendable]] = [
                account("imp-totp", "imp-totp@example.com", verified: true, [["mfaEnrollmentId": "e0", "totpInfo": [String: String]()]]),
                account(
                    "imp-unverified", "imp-unverified@example.com", verified: false,
                    [["mfaEnrollmentId": "e1", "phoneInfo": "+15555550100"]]),
                account("imp-no-email", nil, verified: false, [["mfaEnrollmentId": "e2", "phoneInfo": "+15555550100"]]),
                account("imp-bad-phone", "imp-bad-phone@example.com", verified: true, [["mfaEnrollmentId": "e3", "phoneInfo": "12"]]),
                account(
                    "imp-repeated", "imp-repeated@example.com", verified: true,
                    [["mfaEnrollmentId": "e4", "phoneInfo": "+15555550100"], ["mfaEnrollmentId": "e4", "phoneInfo": "+15555550101"]]),
                account(
                    "imp-ok", "imp-ok@example.com", verified: true,
                    [
                        [
                            "mfaEnrollmentId": "e5", "phoneInfo": "+15555550100", "displayName": "Work",
                            "enrolledAt": "2024-01-02T03:04:05.678Z",
                        ]
                    ]),
            ]
            let reply = try await f.api.admin("batchCreate", ["users": users])
            #expect(reply.status == 200, "\(Self.text(reply))")
            let errors = reply.json["error"] as? [[String: Any]] ?? []
            func message(_ index: Int) -> String? { errors.first { $0["index"] as? Int == index }?["message"] as? String }
            #expect(message(0) == "Importing TOTP MFA is not supported.")
            #expect(message(1) == "Second factor account requires email to be verified.")
            #expect(message(2) == "Second factor account requires email to be presented.")
            #expect(message(3) == "Phone number format is invalid")
            #expect(message(4) == "Enrollment id already exists.")
            #expect(message(5) == nil && errors.count == 5, "\(Self.text(reply))")
            for refused in ["imp-totp", "imp-unverified", "imp-no-email", "imp-bad-phone", "imp-repeated"] {
                #expect(try await f.user(refused) == nil, "\(refused)")
            }
            let imported = try await f.factors("imp-ok")
            #expect(imported.count == 1)
            #expect(imported.first?["mfaEnrollmentId"] as? String == "e5" && imported.first?["phoneInfo"] as? String == "+15555550100")
            #expect(imported.first?["displayName"] as? String == "Work")
            #expect(imported.first?["enrolledAt"] as? String == "2024-01-02T03:04:05.678Z", "correction 6: returned as given")
        }
    }

    @Test("M20, 0.2: the database never holds a TOTP secret, an SMS code, a pending credential or a sessionInfo in clear")
    func nothingInClear() async throws {
        // No test numbers: every code is a random one, delivered by the webhook. The clock starts far
        // enough back that the SMS a minute later is due at once on the outbox's clock.
        try await Self.run(testNumbers: [:], clockStart: Self.stepStart() - 90) { f in
            let email = "m20@example.com"
            let number = "+15555550177"
            let user = try await f.verifiedUser(email)
            let started = try await f.v2("mfaEnrollment:start", Self.smsStart(user.idToken, number))
            let enrolmentSession = try #require(
                (started.json["phoneSessionInfo"] as? [String: Any])?["sessionInfo"] as? String, "\(Self.text(started))")
            let enrolmentCode = try await f.nextSMSCode(to: number, after: 0)
            try await Self.expectNothingInClear(f.database, strings: [enrolmentSession], codes: [enrolmentCode])
            let finalized = try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(user.idToken, enrolmentSession, enrolmentCode))
            #expect(finalized.status == 200, "\(Self.text(finalized))")
            var afterPhone = Session(finalized)
            afterPhone.localID = user.localID
            let phoneID = try #require(Self.factorClaims(afterPhone).id)
            let factor = try await f.enrollTOTP(afterPhone)

            f.clock.advance(61)
            let credential = try await f.challenge(email)
            var strings = [enrolmentSession, factor.sessionInfo, factor.sharedSecretKey, credential]
            try await Self.expectNothingInClear(f.database, secrets: [factor.secret], strings: strings, codes: [enrolmentCode])
            let signInSession = try await f.startSMS(credential, phoneID)
            let signInCode = try await f.nextSMSCode(to: number, after: 1)
            strings.append(signInSession)
            try await Self.expectNothingInClear(f.database, secrets: [factor.secret], strings: strings, codes: [enrolmentCode, signInCode])
            let signedIn = try await f.finalizeSMS(credential, signInSession, signInCode)
            #expect(signedIn.status == 200, "\(Self.text(signedIn))")
            try await Self.expectNothingInClear(f.database, secrets: [factor.secret], strings: strings, codes: [enrolmentCode, signInCode])
        }
    }

    @Test(
        "B.5, B.11: a TOTP app's view: the JS SDK's otpauth URL parses back to the start's secret and parameters, and the app's codes enrol and sign in; adjacentIntervals 0 takes the current step only"
    )
    func authenticatorAppView() async throws {
        try await Self.run { f in
            let email = "app.user@example.com"
            let user = try await f.verifiedUser(email)
            let started = try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken))
            let info = try #require(started.json["totpSessionInfo"] as? [String: Any], "\(Self.text(started))")
            let key = try #require(info["sharedSecretKey"] as? String)
            let algorithm = try #require(info["hashingAlgorithm"] as? String)
            let length = try #require(info["verificationCodeLength"] as? Int)
            let period = try #require(info["periodSec"] as? Int)
            let sessionInfo = try #require(info["sessionInfo"] as? String)

            // TotpSecret.generateQrCodeUrl(accountName, issuer), firebase-js-sdk packages/auth/src/mfa/assertions/totp.ts:
            // no escaping, and no period (the Key Uri Format's default, 30, applies).
            let issuer = "Acme"
            let url = "otpauth://totp/\(issuer):\(email)?secret=\(key)&issuer=\(issuer)&algorithm=\(algorithm)&digits=\(length)"
            // What the app reads from the QR code.
            let components = try #require(URLComponents(string: url), "\(url)")
            #expect(components.scheme == "otpauth" && components.host == "totp" && components.path == "/\(issuer):\(email)")
            var items: [String: String] = [:]
            for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
            #expect(items["issuer"] == issuer && items["algorithm"] == "SHA1" && items["digits"] == "6")
            let appPeriod = try #require(Int(items["period"] ?? "30"))
            #expect(appPeriod == period)
            let appDigits = try #require(Int(items["digits"] ?? ""))
            let secretText = try #require(items["secret"])
            let appSecret = try #require(TOTPReference.base32Decode(secretText))
            #expect(appSecret.count == 20)
            func appCode() -> String {
                TOTPReference.code(secret: appSecret, at: f.clock.now(), period: Int64(appPeriod), digits: appDigits)
            }
            let enrolled = try await f.v2("mfaEnrollment:finalize", Self.totpFinalize(user.idToken, issuer, sessionInfo, appCode()))
            #expect(enrolled.status == 200, "\(Self.text(enrolled))")
            let enrollmentID = try #require(Self.factorClaims(Session(enrolled)).id)

            let zero = try await f.patchMFA(Self.mfaConfig(adjacentIntervals: 0))
            #expect(zero.status == 200, "\(Self.text(zero))")
            let totpConfig = ((zero.json["mfa"] as? [String: Any])?["providerConfigs"] as? [[String: Any]])?.first?["totpProviderConfig"]
            #expect((totpConfig as? [String: Any])?["adjacentIntervals"] == nil, "0 is left out of the output (proto3)")
            f.clock.advance(30)
            let pending = try await f.challenge(email)
            let next = TOTPReference.code(secret: appSecret, step: f.step + 1)
            #expect(
                try await f.finalizeTOTP(pending, enrollmentID, next).errorCode == "INVALID_CODE", "the next step, outside a zero window")
            let signedIn = try await f.finalizeTOTP(pending, enrollmentID, appCode())
            #expect(signedIn.status == 200, "\(Self.text(signedIn))")
            #expect(Self.factorClaims(Session(signedIn)).kind == "totp")
        }
    }

    // MARK: Attacks

    @Test(
        "Attack: one TOTP code sent twice at once signs in once; SMS sessions serve only the pending credential, purpose and user they were made for"
    )
    func bindingAttacks() async throws {
        try await Self.run { f in
            let email = "attack@example.com"
            let user = try await f.verifiedUser(email)
            let (afterPhone, phoneID) = try await f.enrollPhone(user, "+15555550100")
            let factor = try await f.enrollTOTP(afterPhone)
            f.clock.advance(30)
            let code = TOTPReference.code(secret: factor.secret, step: f.step)
            let first = try await f.challenge(email)
            let second = try await f.challenge(email)
            async let one = f.finalizeTOTP(first, factor.enrollmentID, code)
            async let other = f.finalizeTOTP(second, factor.enrollmentID, code)
            let replies = try await [one, other]
            #expect(replies.filter { $0.status == 200 }.count == 1, "\(replies.map(Self.text))")
            #expect(replies.filter { $0.errorCode == "INVALID_CODE" }.count == 1, "\(replies.map(Self.text))")
            let winner = replies[0].status == 200 ? first : second
            #expect(try await f.finalizeTOTP(winner, factor.enrollmentID, code).errorCode == "INVALID_PENDING_TOKEN", "replayed")

            // An SMS session belongs to the pending credential it was started for, and to its purpose.
            let owner = try await f.challenge(email)
            let intruder = try await f.challenge(email)
            let sessionInfo = try await f.startSMS(owner, phoneID)
            #expect(try await f.finalizeSMS(intruder, sessionInfo, "123456").errorCode == "INVALID_SESSION_INFO")
            let asFirstFactor = try await f.api.client("signInWithPhoneNumber", ["sessionInfo": sessionInfo, "code": "123456"])
            #expect(asFirstFactor.errorCode == "INVALID_SESSION_INFO", "\(Self.text(asFirstFactor))")
            let sent = try await f.api.client("sendVerificationCode", ["phoneNumber": "+15555550100"])
            let phoneSignIn = try #require(sent.string("sessionInfo"), "\(Self.text(sent))")
            #expect(
                try await f.finalizeSMS(intruder, phoneSignIn, "123456").errorCode == "INVALID_SESSION_INFO", "a phone sign-in's session")
            let passed = try await f.finalizeSMS(owner, sessionInfo, "123456")
            #expect(passed.status == 200, "\(Self.text(passed))")
            #expect(Self.factorClaims(Session(passed)).id == phoneID)

            // B.3, A.5: a user with factors neither links nor signs in with a phone as a first factor.
            let firstFactorRefused = "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user."
            let linkSent = try await f.api.client("sendVerificationCode", ["phoneNumber": "+15555550105"])
            let linkSession = try #require(linkSent.string("sessionInfo"), "\(Self.text(linkSent))")
            let linked = try await f.api.client(
                "signInWithPhoneNumber", ["sessionInfo": linkSession, "code": "123461", "idToken": Session(passed).idToken])
            #expect(linked.errorMessage == firstFactorRefused, "\(Self.text(linked))")
            // A.4 step 5 refuses the code for such a number; one sent before the number became the
            // user's is refused at A.5.
            let signInSent = try await f.api.client("sendVerificationCode", ["phoneNumber": "+15555550102"])
            let signInSession = try #require(signInSent.string("sessionInfo"), "\(Self.text(signInSent))")
            #expect(try await f.api.admin("update", ["localId": user.localID, "phoneNumber": "+15555550102"]).status == 200)
            #expect(
                try await f.api.client("sendVerificationCode", ["phoneNumber": "+15555550102"]).errorMessage == firstFactorRefused)
            let byPhone = try await f.api.client("signInWithPhoneNumber", ["sessionInfo": signInSession, "code": "123458"])
            #expect(byPhone.errorMessage == firstFactorRefused, "\(Self.text(byPhone))")

            // Enrolment sessions belong to their user.
            let mallory = try await f.verifiedUser("mallory@example.com")
            let victim = try await f.verifiedUser("victim@example.com")
            let victimStart = try await f.v2("mfaEnrollment:start", Self.smsStart(victim.idToken, "+15555550101"))
            let victimSMS = try #require((victimStart.json["phoneSessionInfo"] as? [String: Any])?["sessionInfo"] as? String)
            #expect(
                try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(mallory.idToken, victimSMS, "123457")).errorCode
                    == "INVALID_SESSION_INFO")
            let (victimSecret, victimTOTP) = try await f.startTOTP(victim.idToken)
            #expect(
                try await f.v2(
                    "mfaEnrollment:finalize",
                    Self.totpFinalize(mallory.idToken, "Mine", victimTOTP, TOTPReference.code(secret: victimSecret, step: f.step))
                ).errorCode == "INVALID_SESSION_INFO")
            #expect(try await f.factors(mallory.localID).isEmpty)
            #expect(try await f.v2("mfaEnrollment:finalize", Self.smsFinalize(victim.idToken, victimSMS, "123457")).status == 200)
        }
    }

    @Test(
        "Attack: 100 wrong TOTP codes from 100 addresses, with fresh first factors as needed, end in QUOTA_EXCEEDED and never sign in; one guess returns after ten minutes"
    )
    func guessingFromManyAddresses() async throws {
        try await Self.run(configure: { $0.listen.trustedProxies = [IPNetwork("127.0.0.1")!] }) { f in
            let email = "flood@example.com"
            let factor = try await f.enrollTOTP(try await f.verifiedUser(email))
            f.clock.advance(30)
            var credential = try await f.challenge(email, from: "198.51.100.250")
            var answers: [String: Int] = [:]
            var last: TestHTTPClient.Reply?
            for index in 0..<100 {
                let address = "203.0.113.\(index + 1)"
                let guess = TOTPReference.wrongCode(secret: factor.secret, near: f.step, index: index)
                var reply = try await f.finalizeTOTP(credential, factor.enrollmentID, guess, from: address)
                if reply.errorCode == "INVALID_PENDING_TOKEN" {
                    // Five failures killed the credential: the attacker, who has the password, starts over.
                    credential = try await f.challenge(email, from: address)
                    reply = try await f.finalizeTOTP(credential, factor.enrollmentID, guess, from: address)
                }
                answers[reply.errorCode ?? "HTTP \(reply.status)", default: 0] += 1
                last = reply
            }
            #expect(answers == ["INVALID_CODE": 5, "QUOTA_EXCEEDED": 95], "\(answers)")
            #expect(last?.errorMessage == Self.quotaExceeded)
            let right = TOTPReference.code(secret: factor.secret, step: f.step)
            #expect(
                try await f.finalizeTOTP(credential, factor.enrollmentID, right, from: "203.0.113.201").errorMessage == Self.quotaExceeded,
                "even the right code")
            #expect(
                try await TakeoverTests.count("SELECT count(*)::int FROM sessions WHERE second_factor IS NOT NULL", f.database) == 1,
                "only the enrolment's session passed a factor")
            f.clock.advance(600)
            let later = try await f.challenge(email, from: "203.0.113.202")
            let passed = try await f.finalizeTOTP(
                later, factor.enrollmentID, TOTPReference.code(secret: factor.secret, step: f.step), from: "203.0.113.202")
            #expect(passed.status == 200, "\(Self.text(passed))")
        }
    }

    @Test(
        "Attack, B.11: guesses sent in parallel over many pending credentials, with the abuse limits off, still stop at the factor's five; a right code gives its guess back"
    )
    func parallelGuessesOverManyCredentials() async throws {
        try await Self.run(configure: { $0.abuseLimits = AbuseLimitSettings(enabled: false) }) { f in
            let email = "parallel@example.com"
            let factor = try await f.enrollTOTP(try await f.verifiedUser(email))
            f.clock.advance(30)
            // The right code twice in a row costs no guess: the bound counts failures only.
            for _ in 0..<2 {
                let credential = try await f.challenge(email)
                f.clock.advance(30)
                let passed = try await f.finalizeTOTP(
                    credential, factor.enrollmentID, TOTPReference.code(secret: factor.secret, step: f.step))
                #expect(passed.status == 200, "\(Self.text(passed))")
            }
            // Four pending credentials (the attacker has the password), five guesses on each, all at once.
            var credentials: [String] = []
            for _ in 0..<4 { credentials.append(try await f.challenge(email)) }
            let step = f.step
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for (c, credential) in credentials.enumerated() {
                    for g in 0..<5 {
                        let guess = TOTPReference.wrongCode(secret: factor.secret, near: step, index: c * 5 + g)
                        group.addTask { try await f.finalizeTOTP(credential, factor.enrollmentID, guess).errorCode ?? "OK" }
                    }
                }
                var counts: [String: Int] = [:]
                for try await code in group { counts[code, default: 0] += 1 }
                return counts
            }
            #expect(answers == ["INVALID_CODE": 5, "QUOTA_EXCEEDED": 15], "\(answers)")
            let fresh = try await f.challenge(email)
            #expect(
                try await f.finalizeTOTP(fresh, factor.enrollmentID, TOTPReference.code(secret: factor.secret, step: step + 1)).errorMessage
                    == Self.quotaExceeded)
        }
    }

    @Test("Review: a malformed admin mfa is refused, never read as removing every factor; factor names have a display name's bounds")
    func malformedAdminFactors() async throws {
        try await Self.run { f in
            let user = try await f.verifiedUser("malformed@example.com")
            let phone = ["phoneInfo": "+15555550177"]
            #expect(try await f.api.admin("update", ["localId": user.localID, "mfa": ["enrollments": [phone]]]).status == 200)
            for bad: any Sendable in [
                ["enrolments": [phone]] as [String: any Sendable], [phone], ["enrollments": phone] as [String: any Sendable],
                ["enrollments": ["+15555550177"]] as [String: any Sendable],
            ] {
                let reply = try await f.api.admin("update", ["localId": user.localID, "mfa": bad])
                #expect(reply.status == 400, "\(Self.text(reply))")
            }
            #expect(try await f.factors(user.localID).count == 1, "nothing removed")
            let long = String(repeating: "n", count: 300)
            let named = try await f.api.admin(
                "update", ["localId": user.localID, "mfa": ["enrollments": [["phoneInfo": "+15555550177", "displayName": long]]]])
            #expect(named.errorCode == "INVALID_PROFILE_ATTRIBUTE", "\(Self.text(named))")
        }
    }

    @Test("Attack: one signed-in user cannot fill the enrolment tables: ten starts, then TOO_MANY_ATTEMPTS_TRY_LATER until a minute passes")
    func enrolmentStartsAreBounded() async throws {
        try await Self.run { f in
            let user = try await f.verifiedUser("starts@example.com")
            for _ in 0..<10 {
                #expect(try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken)).status == 200)
            }
            let refused = try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken))
            #expect(refused.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(Self.text(refused))")
            #expect(try await TakeoverTests.count("SELECT count(*)::int FROM totp_enrollments", f.database) == 10)
            f.clock.advance(60)
            #expect(try await f.v2("mfaEnrollment:start", Self.totpStart(user.idToken)).status == 200)
        }
    }
}
