import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import Crypto
import Foundation
import Logging

/// Reads settings from the environment, recording every problem (so the server names them all
/// at once), every development default a `demo-` project runs on, and every unsafe choice.
struct SettingsReader {
    let environment: [String: String]
    /// Whether the project is one of Firebase's local-only `demo-` projects.
    let isDemo: Bool
    var problems: [String] = []
    var defaults: [String] = []
    var warnings: [String] = []

    /// The variable's value; empty is unset (compose passes `${VAR:-}` through as an empty string).
    func text(_ name: String) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A comma-separated list, blanks trimmed (nil: unset).
    func list(_ name: String) -> [String]? {
        environment[name].map(Self.list)
    }

    static func list(_ raw: String) -> [String] {
        raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A switch that is on only when set to 1, true, yes or on.
    func flag(_ name: String) -> Bool {
        ["1", "true", "yes", "on"].contains(environment[name]?.lowercased() ?? "")
    }

    /// A switch only `demo-` projects may turn on: listed with the development defaults there
    /// (`whenOn (NAME)`), refused anywhere else (`NAME risk: only demo- projects may set it`).
    mutating func demoOnlyFlag(_ name: String, whenOn: String, risk: String) -> Bool {
        guard flag(name) else { return false }
        if isDemo {
            defaults.append("\(whenOn) (\(name))")
        } else {
            problems.append("\(name) \(risk): only demo- projects may set it")
        }
        return true
    }

    /// An on/off switch; `fallback` when unset.
    mutating func toggle(_ name: String, _ fallback: Bool) -> Bool {
        switch environment[name]?.lowercased() {
        case nil, "": return fallback
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default:
            problems.append("\(name) must be on or off")
            return fallback
        }
    }

    /// A whole number in `range`; `fallback` when unset.
    mutating func number(_ name: String, _ fallback: Int64, _ range: ClosedRange<Int64>) -> Int64 {
        guard let raw = environment[name] else { return fallback }
        guard let value = Int64(raw), range.contains(value) else {
            problems.append("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            return fallback
        }
        return value
    }

    /// A port from 0 to 65535; `fallback` when unset.
    mutating func port(_ raw: String?, _ name: String, _ fallback: Int) -> Int {
        guard let raw else { return fallback }
        guard let port = Int(raw), (0...65535).contains(port) else {
            problems.append("\(name) must be a port number from 0 to 65535")
            return fallback
        }
        return port
    }
}

extension Configuration {
    /// Validates the input, section by section. A `demo-` project may run on development defaults
    /// (any API key, admin token `owner`, a key-encryption key derived from the project id), each
    /// recorded in ``developmentDefaults``; any other project must configure them or is refused.
    init(_ input: ConfigurationInput) throws {
        let projectID = input.projectID ?? "demo-project"
        var reader = SettingsReader(environment: input.environment, isDemo: projectID.hasPrefix("demo-"))
        if !projectID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) || projectID.isEmpty
            || projectID.count > 63
        {
            reader.problems.append("ACCOUNTD_PROJECT_ID \"\(projectID)\" is not a project id (letters, digits and '-', at most 63)")
        }
        self.init(projectID: projectID)
        projectNumber = reader.text("ACCOUNTD_PROJECT_NUMBER")
        if let projectNumber, projectNumber.count > 20 || !projectNumber.allSatisfy({ $0.isASCII && $0.isNumber }) {
            reader.problems.append("ACCOUNTD_PROJECT_NUMBER \"\(projectNumber.prefix(40))\" is not a project number (digits, at most 20)")
        }
        if let level = input.logLevel {
            if let parsed = Logger.Level(rawValue: level.lowercased()) {
                logLevel = parsed
            } else {
                reader.problems.append("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
            }
        }
        if let format = reader.text("ACCOUNTD_LOG_FORMAT") {
            if let parsed = LineLogHandler.Format(rawValue: format.lowercased()) {
                logFormat = parsed
            } else {
                reader.problems.append("ACCOUNTD_LOG_FORMAT must be text or json")
            }
        }
        metricsEnabled = reader.toggle("ACCOUNTD_METRICS", true)
        listen = Listen(input, &reader)
        access = Access(input, &reader, adminHost: listen.adminHost)
        database = DatabaseSettings(input, &reader, requestTimeoutSeconds: listen.requestTimeoutSeconds)
        keys = Keys(input, &reader, projectID: projectID)
        accounts = Accounts(input, &reader)
        email = Email(&reader)
        federation = Federation(&reader)
        phone = Phone(&reader)
        abuseLimits = Self.abuseLimits(input.environment, isDemo: reader.isDemo, problems: &reader.problems)
        if !reader.isDemo && Self.isWildcard(listen.host) && listen.publicURL == nil && email.actionHandlerURL == nil {
            // Email links point at the public URL: derived from a wildcard it is no address at all.
            reader.problems.append(
                "ACCOUNTD_HOST \(listen.host) listens on every interface and ACCOUNTD_PUBLIC_URL is not set: give the URL browsers reach accountd at (https://auth.example.com), which email links point to"
            )
        }
        if !reader.problems.isEmpty {
            if !reader.isDemo {
                reader.problems.append("only projects whose id starts with demo- run on development defaults")
            }
            throw ConfigurationError(problems: reader.problems)
        }
        developmentDefaults = reader.defaults
        warnings = reader.warnings
    }
}

extension Configuration.Listen {
    init(_ input: ConfigurationInput, _ reader: inout SettingsReader) {
        host = input.host ?? "127.0.0.1"
        port = reader.port(input.port, "ACCOUNTD_PORT", 9099)
        adminPort = reader.port(input.adminPort, "ACCOUNTD_ADMIN_PORT", Configuration.defaultAdminPort)
        if port != 0, port == adminPort {
            reader.problems.append("ACCOUNTD_ADMIN_PORT must differ from ACCOUNTD_PORT (\(port)): admins have a listener of their own")
        }
        adminHost = input.adminHost ?? "127.0.0.1"
        publicURL = reader.text("ACCOUNTD_PUBLIC_URL").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let publicURL, ActionCodeSettings.httpHost(publicURL) == nil {
            reader.problems.append("ACCOUNTD_PUBLIC_URL \"\(publicURL.prefix(80))\" is not an absolute http(s) URL with a host")
        }
        idleTimeoutSeconds = reader.number("ACCOUNTD_HTTP_IDLE_TIMEOUT_SECONDS", 60, 1...3600)
        requestTimeoutSeconds = reader.number("ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS", 30, 1...3600)
        for entry in reader.list("ACCOUNTD_TRUSTED_PROXIES") ?? [] {
            if let network = IPNetwork(entry) {
                trustedProxies.append(network)
                if network.coversEverything {
                    reader.warnings.append(
                        "ACCOUNTD_TRUSTED_PROXIES entry \(entry) holds every address: any client can name itself in X-Forwarded-For and choose its own abuse-limit key"
                    )
                }
            } else {
                reader.problems.append("ACCOUNTD_TRUSTED_PROXIES entry \"\(entry)\" is not an address or CIDR (10.0.0.0/8, fd00::/8)")
            }
        }
    }
}

extension Configuration.Access {
    /// API keys and admin tokens; a real project's admin tokens must be secrets no one guesses.
    init(_ input: ConfigurationInput, _ reader: inout SettingsReader, adminHost: String) {
        if let raw = input.apiKeys {
            apiKeys = Set(SettingsReader.list(raw))
            if apiKeys!.isEmpty { reader.problems.append("ACCOUNTD_API_KEYS is empty") }
        } else if reader.isDemo {
            reader.defaults.append("any API key is accepted (set ACCOUNTD_API_KEYS)")
        } else {
            reader.problems.append("ACCOUNTD_API_KEYS is not set: list the API keys apps send, comma-separated")
        }

        if let raw = input.adminTokens {
            for (index, entry) in SettingsReader.list(raw).enumerated() {
                if let colon = entry.firstIndex(of: ":") {
                    let name = String(entry[..<colon])
                    let token = String(entry[entry.index(after: colon)...])
                    if name.isEmpty || token.isEmpty {
                        reader.problems.append("ACCOUNTD_ADMIN_TOKENS entry \(index + 1) must be NAME:TOKEN or TOKEN")
                    }
                    adminTokens[token] = name
                } else {
                    adminTokens[entry] = entry == "owner" ? "owner" : "admin-\(index + 1)"
                }
            }
            if adminTokens.isEmpty { reader.problems.append("ACCOUNTD_ADMIN_TOKENS is empty") }
        } else if reader.isDemo {
            adminTokens = ["owner": "owner"]
            reader.defaults.append("admin token is \"owner\" (set ACCOUNTD_ADMIN_TOKENS)")
        } else {
            reader.problems.append("ACCOUNTD_ADMIN_TOKENS is not set: give NAME:TOKEN pairs, comma-separated")
        }
        guard !reader.isDemo else { return }
        // An admin token is a password to every account: a real project's must be a secret no one
        // guesses (second review). The one exception is the Admin SDK's emulator token `owner`,
        // which that SDK always sends: on loopback (this machine only), or, with the explicit
        // switch, on a network the operator says is private.
        for (token, name) in adminTokens.sorted(by: { $0.value < $1.value }) {
            if token == Configuration.wellKnownAdminToken {
                guard !Configuration.isLoopback(adminHost) else { continue }
                if reader.flag("ACCOUNTD_ALLOW_WELL_KNOWN_ADMIN_TOKEN") {
                    reader.warnings.append(
                        "the admin token \"owner\" (the Admin SDK's emulator token, known to everyone) is accepted on \(adminHost), outside loopback"
                    )
                } else {
                    reader.problems.append(
                        "ACCOUNTD_ADMIN_TOKENS has the well-known token \"owner\" and ACCOUNTD_ADMIN_HOST \(adminHost) is not loopback: anyone who reaches it is an admin. Use a secret token (accountctl and the REST API take any), or set ACCOUNTD_ALLOW_WELL_KNOWN_ADMIN_TOKEN=1 if the network itself is private"
                    )
                }
                continue
            }
            let bits = Configuration.estimatedBits(token)
            if bits < Configuration.minimumAdminTokenBits {
                reader.problems.append(
                    "ACCOUNTD_ADMIN_TOKENS entry \(name) carries about \(Int(bits)) bits: a real project's admin tokens need at least \(Int(Configuration.minimumAdminTokenBits)) (openssl rand -base64 24)"
                )
            }
        }
    }
}

extension Configuration.DatabaseSettings {
    init(_ input: ConfigurationInput, _ reader: inout SettingsReader, requestTimeoutSeconds: Int64) {
        if let raw = input.databaseURL {
            do { url = try DatabaseURL(raw) } catch { reader.problems.append("\(error)") }
        }
        func optionalURL(_ name: String) -> DatabaseURL? {
            guard let raw = reader.text(name) else { return nil }
            do { return try DatabaseURL(raw) } catch {
                reader.problems.append("\(name): \(error)")
                return nil
            }
        }
        readURL = optionalURL("ACCOUNTD_DATABASE_READ_URL")
        sessionURL = optionalURL("ACCOUNTD_DATABASE_SESSION_URL")
        migrationsDirectory = input.migrationsDirectory ?? "migrations"
        dataDirectory = input.dataDirectory ?? ".accountd"
        migrateOnStart = input.migrate
        startupWaitSeconds = reader.number("ACCOUNTD_STARTUP_DB_WAIT_SECONDS", 60, 1...3600)
        let maximumConnections = reader.number("ACCOUNTD_DB_MAX_CONNECTIONS", 20, 1...1000)
        let minimumConnections = reader.number("ACCOUNTD_DB_MIN_CONNECTIONS", maximumConnections, 0...maximumConnections)
        let keepAlive = reader.number("ACCOUNTD_DB_KEEPALIVE_SECONDS", 0, 0...86400)
        let lockTimeout = reader.number("ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS", 5, 0...3600)
        let statementTimeout = reader.number("ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS", 10, 0...86400)
        let deadline = reader.number("ACCOUNTD_REQUEST_DEADLINE_SECONDS", 5, 1...600)
        if deadline >= requestTimeoutSeconds {
            // The request timeout answers 503 for what nothing else bounded; a deadline as long
            // would leave a request waiting for a connection after its answer.
            reader.problems.append(
                "ACCOUNTD_REQUEST_DEADLINE_SECONDS (\(deadline)) must be shorter than ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS (\(requestTimeoutSeconds))"
            )
        }
        pool = PoolSettings(
            maximumConnections: Int(maximumConnections), minimumConnections: Int(minimumConnections),
            keepAliveSeconds: keepAlive == 0 ? nil : keepAlive, waitSeconds: deadline,
            lockTimeoutSeconds: lockTimeout == 0 ? nil : lockTimeout,
            statementTimeoutSeconds: statementTimeout == 0 ? nil : statementTimeout)
        pool.preparedStatements = reader.toggle("ACCOUNTD_DB_PREPARED_STATEMENTS", true)
    }
}

extension Configuration.Keys {
    init(_ input: ConfigurationInput, _ reader: inout SettingsReader, projectID: String) {
        if let raw = input.keyEncryptionKey {
            if let key = Configuration.decodeKey(raw) {
                keyEncryptionKey = key
            } else {
                reader.problems.append("ACCOUNTD_KEY_ENCRYPTION_KEY must be 32 bytes, base64 or 64 hex digits (openssl rand -base64 32)")
            }
        } else if reader.isDemo {
            keyEncryptionKey = Array(SHA256.hash(data: Data("accountd development key-encryption key \(projectID)".utf8)))
            reader.defaults.append(
                "the key-encryption key is derived from the project id and is NOT secret (set ACCOUNTD_KEY_ENCRYPTION_KEY)")
        } else {
            reader.problems.append("ACCOUNTD_KEY_ENCRYPTION_KEY is not set: give 32 random bytes in base64 (openssl rand -base64 32)")
        }
        // First-format refresh tokens: `auto` (the default) decides at start from the sessions.
        switch reader.environment["ACCOUNTD_REFRESH_ACCEPT_V1"]?.lowercased() {
        case nil, "", "auto": acceptVersion1RefreshTokens = nil
        default: acceptVersion1RefreshTokens = reader.toggle("ACCOUNTD_REFRESH_ACCEPT_V1", true)
        }
        verifiedTokenCacheEntries = Int(reader.number("ACCOUNTD_ID_TOKEN_CACHE_ENTRIES", 10_000, 0...10_000_000))
    }
}

extension Configuration.Accounts {
    init(_ input: ConfigurationInput, _ reader: inout SettingsReader) {
        authorizedDomains = input.authorizedDomains.map { SettingsReader.list($0).map { $0.lowercased() } } ?? ["localhost"]
        // The emulator allows anonymous sign-up; a real project turns it on explicitly.
        allowAnonymous = reader.toggle("ACCOUNTD_ALLOW_ANONYMOUS", reader.isDemo)
        emailEnumerationProtection = reader.toggle("ACCOUNTD_EMAIL_ENUMERATION_PROTECTION", !reader.isDemo)
        passwordMinimumLength = Int(reader.number("ACCOUNTD_PASSWORD_MIN_LENGTH", 6, 6...4096))
        recentLoginSeconds = reader.number("ACCOUNTD_RECENT_LOGIN_SECONDS", 300, 0...31_536_000)
        refreshReuseGraceSeconds = Double(reader.number("ACCOUNTD_REFRESH_REUSE_GRACE_SECONDS", 10, 0...3600))
        passwordHashParameters = .init(
            memoryKiB: Int(reader.number("ACCOUNTD_ARGON2_MEMORY_KIB", 19 * 1024, 8...4_194_304)),
            iterations: Int(reader.number("ACCOUNTD_ARGON2_ITERATIONS", 2, 1...64)))
        if reader.environment["ACCOUNTD_HASH_QUEUE_LIMIT"] != nil {
            hashQueueLimit = Int(reader.number("ACCOUNTD_HASH_QUEUE_LIMIT", 64, 1...1_000_000))
        }
    }
}

extension Configuration.Email {
    init(_ reader: inout SettingsReader) {
        actionHandlerURL = reader.text("ACCOUNTD_ACTION_HANDLER_URL")
        if let url = actionHandlerURL, ActionCodeSettings.httpHost(url) == nil {
            reader.problems.append("ACCOUNTD_ACTION_HANDLER_URL \"\(url.prefix(80))\" is not an absolute http(s) URL with a host")
        }
        linkDomains = reader.list("ACCOUNTD_LINK_DOMAINS")?.map { $0.lowercased() }
        dynamicLinkDomains = reader.list("ACCOUNTD_DYNAMIC_LINK_DOMAINS")?.map { $0.lowercased() } ?? []
        productName = reader.environment["ACCOUNTD_PRODUCT_NAME"] ?? "accountd"
        productLogoURL = reader.environment["ACCOUNTD_PRODUCT_LOGO_URL"]
        actionTemplatesDirectory = reader.environment["ACCOUNTD_ACTION_TEMPLATES_DIR"]
        recaptchaSiteKey = reader.text("ACCOUNTD_RECAPTCHA_SITE_KEY")
        transportEnvironment = reader.environment.filter {
            $0.key.hasPrefix("ACCOUNTD_MAIL_") || $0.key.hasPrefix("ACCOUNTD_SMTP_") || $0.key.hasPrefix("ACCOUNTD_WEBHOOK_")
        }
        // A demo project defaults to the log transport; a real one must choose, and the log (which
        // prints live sign-in links) only explicitly.
        switch reader.environment["ACCOUNTD_MAIL_TRANSPORT"]?.lowercased() {
        case nil, "":
            if !reader.isDemo {
                reader.problems.append(
                    "ACCOUNTD_MAIL_TRANSPORT is not set: choose smtp or webhook (log prints live sign-in links; set it explicitly to accept that)"
                )
            }
        case "log":
            if !reader.isDemo {
                reader.warnings.append(
                    "ACCOUNTD_MAIL_TRANSPORT=log: every email, with its live sign-in and reset link, is written to the log instead of sent")
            }
        default: break
        }
    }
}

extension Configuration.Phone {
    init(_ reader: inout SettingsReader) {
        switch reader.environment["ACCOUNTD_SMS_TRANSPORT"]?.lowercased() {
        case nil, "": transport = reader.isDemo ? .log : .none
        case let raw?:
            guard let choice = Configuration.SMSTransportChoice(rawValue: raw) else {
                reader.problems.append("ACCOUNTD_SMS_TRANSPORT must be none, log or webhook")
                break
            }
            transport = choice
        }
        if transport == .log && !reader.isDemo {
            reader.warnings.append("ACCOUNTD_SMS_TRANSPORT=log: SMS codes are written to the log instead of sent")
        }
        webhookURL = reader.text("ACCOUNTD_SMS_WEBHOOK_URL")
        webhookSecret = reader.text("ACCOUNTD_SMS_WEBHOOK_SECRET")
        if transport == .webhook {
            if webhookURL.flatMap(ActionCodeSettings.httpHost) == nil {
                reader.problems.append("ACCOUNTD_SMS_TRANSPORT=webhook needs ACCOUNTD_SMS_WEBHOOK_URL, an absolute http(s) URL")
            }
            if (webhookSecret?.count ?? 0) < 16 {
                reader.problems.append("ACCOUNTD_SMS_WEBHOOK_SECRET must be at least 16 characters")
            }
        }
        codeLifetimeSeconds = reader.number("ACCOUNTD_SMS_CODE_TTL", 600, 60...1800)
        appName = reader.text("ACCOUNTD_APP_NAME")
        testInbox = reader.demoOnlyFlag(
            "ACCOUNTD_TEST_SMS_INBOX",
            whenOn: "SMS codes are listed without credentials at /emulator/v1/projects/…/verificationCodes",
            risk: "lists live SMS codes without credentials")
    }
}

extension Configuration.Federation {
    init(_ reader: inout SettingsReader) {
        fetchTimeoutSeconds = reader.number("ACCOUNTD_IDP_FETCH_TIMEOUT_SECONDS", 5, 1...120)
        caFile = reader.text("ACCOUNTD_IDP_CA_FILE")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            reader.problems.append("ACCOUNTD_IDP_CA_FILE \(caFile) cannot be read")
        }
        acceptUnsignedCustomTokens = reader.demoOnlyFlag(
            "ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS", whenOn: "unsigned custom tokens are accepted: anyone can sign in as any uid",
            risk: "lets anyone sign in as any uid")
        acceptUnverifiedIdPTokens = reader.demoOnlyFlag(
            "ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS",
            whenOn: "IdP tokens are accepted unverified (unsigned or bare JSON): anyone can sign in as any identity",
            risk: "accepts unsigned IdP tokens")
    }
}

extension Configuration {
    /// The abuse limits from the environment (federation-and-limits.md §E.5): every bucket as
    /// `ACCOUNTD_LIMIT_<BUCKET>=<burst>/<period>` (`5/1h`; `0` turns it off), the project's daily
    /// mail quotas as `ACCOUNTD_LIMIT_MAIL_PER_PROJECT_<TYPE>`, the lockout's numbers.
    static func abuseLimits(_ environment: [String: String], isDemo: Bool, problems: inout [String]) -> AbuseLimitSettings {
        var enabled = !isDemo
        switch environment["ACCOUNTD_ABUSE_LIMITS"]?.lowercased() {
        case nil, "": break
        case "on", "1", "true", "yes": enabled = true
        case "off", "0", "false", "no": enabled = false
        default: problems.append("ACCOUNTD_ABUSE_LIMITS must be on or off")
        }
        var settings = AbuseLimitSettings(enabled: enabled)
        func bucket(_ name: String) -> RateBucket?? {
            guard let raw = environment[name] else { return .none }
            if raw == "0" { return .some(nil) }
            guard let bucket = RateBucket.parse(raw) else {
                problems.append("\(name) must be <burst>/<period> (5/1h, 20/3m, 100/1d) or 0")
                return .none
            }
            return .some(bucket)
        }
        for limit in LimitBucket.allCases {
            if let value = bucket("ACCOUNTD_LIMIT_" + limit.rawValue.uppercased()) { settings.buckets[limit] = value }
        }
        for kind in EmailKind.allCases {
            if let value = bucket("ACCOUNTD_LIMIT_MAIL_PER_PROJECT_" + kind.rawValue) { settings.mailQuotas[kind] = value }
        }
        func number(_ name: String, _ range: ClosedRange<Int>) -> Int? {
            guard let raw = environment[name] else { return nil }
            guard let value = Int(raw), range.contains(value) else {
                problems.append("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                return nil
            }
            return value
        }
        var lockout = LockoutPolicy()
        if let value = number("ACCOUNTD_LOCKOUT_THRESHOLD_UNKNOWN", 1...10_000) { lockout.thresholdUnknown = value }
        if let value = number("ACCOUNTD_LOCKOUT_THRESHOLD_KNOWN", 1...10_000) { lockout.thresholdKnown = value }
        if let value = number("ACCOUNTD_LOCKOUT_BASE_SECONDS", 1...86400) { lockout.baseSeconds = Double(value) }
        if let value = number("ACCOUNTD_LOCKOUT_MAX_SECONDS", 1...31_536_000) { lockout.maxSeconds = Double(value) }
        if let value = number("ACCOUNTD_LOCKOUT_RESET_HOURS", 1...8760) { lockout.resetSeconds = Double(value) * 3600 }
        if let value = number("ACCOUNTD_LOCKOUT_HARD_LIMIT", 0...1_000_000) { lockout.hardLimit = value }
        if let value = number("ACCOUNTD_KNOWN_NETWORK_DAYS", 0...3650) { lockout.knownNetworkDays = value }
        settings.lockout = lockout
        return settings
    }

    static func decodeKey(_ raw: String) -> [UInt8]? {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, let bytes = Hex.decode(text) {
            return bytes
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return nil }
        return Array(data)
    }
}
