import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import Crypto
import Foundation
import Logging

/// Everything the server is told at start-up, read once here at the edge and passed down as
/// values. Built from command-line options over environment variables.
struct Configuration: Sendable {
    /// The database; `nil` runs a private local cluster under ``dataDirectory``.
    var databaseURL: DatabaseURL?
    /// Listen address.
    var host: String
    /// Listen port (0 picks a free one; tests use that).
    var port: Int
    /// The admin listener's address (`ACCOUNTD_ADMIN_HOST`, default loopback): admin RPCs only.
    var adminHost = "127.0.0.1"
    /// The admin listener's port (`ACCOUNTD_ADMIN_PORT`, default 9098; 0 picks a free one).
    var adminPort = Configuration.defaultAdminPort
    /// The Firebase project id served.
    var projectID: String
    /// API keys accepted; `nil` accepts any (demo projects only).
    var apiKeys: Set<String>?
    /// Admin bearer tokens, token → name.
    var adminTokens: [String: String]
    /// Domains a continue URL may point at.
    var authorizedDomains: [String]
    /// The 32-byte key-encryption key that seals signing keys and derives refresh-token keys.
    var keyEncryptionKey: [UInt8]
    /// Log level.
    var logLevel: Logger.Level
    /// Where the numbered SQL files are.
    var migrationsDirectory: String
    /// Where the local cluster lives when there is no database URL.
    var dataDirectory: String
    /// Apply pending migrations at start instead of refusing to start.
    var migrateOnStart: Bool
    /// Development defaults in force, each a warning the server prints loudly at start.
    var developmentDefaults: [String]
    /// Choices made explicitly that are unsafe for real users, each printed loudly at start.
    var warnings: [String] = []

    /// The project's rules (identity-toolkit.md §1.6).
    var projectSettings: ProjectSettings {
        var settings = ProjectSettings(projectID: projectID)
        settings.authorizedDomains = authorizedDomains
        settings.allowAnonymous = allowAnonymous
        settings.emailEnumerationProtection = emailEnumerationProtection
        settings.recentLoginSeconds = recentLoginSeconds
        settings.refreshReuseGraceSeconds = refreshReuseGraceSeconds
        settings.passwordPolicy.minimumLength = passwordMinimumLength
        settings.actionHandlerURL = actionHandlerURL ?? "\(effectivePublicURL)/__/auth/action"
        settings.linkDomains = linkDomains ?? [URLComponents(string: settings.actionHandlerURL)?.host ?? host]
        settings.dynamicLinkDomains = dynamicLinkDomains
        settings.productName = productName
        if let recaptchaSiteKey { settings.recaptchaSiteKey = recaptchaSiteKey }
        if let projectNumber { settings.projectNumber = projectNumber }
        settings.linkAPIKey = accessPolicy.linkAPIKey
        return settings
    }

    /// The connection pool (`ACCOUNTD_DB_MAX_CONNECTIONS`, `ACCOUNTD_DB_MIN_CONNECTIONS`,
    /// `ACCOUNTD_DB_KEEPALIVE_SECONDS`, `ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS`,
    /// `ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS`); its `waitSeconds` is the request deadline
    /// (`ACCOUNTD_REQUEST_DEADLINE_SECONDS`, default 5): how long a request may wait for a database
    /// connection before it answers 503. See ``DatabasePool``.
    var databasePool = DatabasePool()
    /// argon2id cost of new password hashes.
    var passwordHashParameters: Argon2idHasher.Parameters = .owasp
    /// Anonymous sign-up (`ACCOUNTD_ALLOW_ANONYMOUS`; off, on for `demo-` projects as in the emulator).
    var allowAnonymous = false
    /// Refresh tokens of the first format (issued before version 2, whose MAC needs the session
    /// read first) still refreshed (`ACCOUNTD_REFRESH_ACCEPT_V1`: `on`, `off`, or `auto`, nil: while
    /// at start some live session still holds one).
    var acceptVersion1RefreshTokens: Bool? = nil
    /// Email enumeration protection (`ACCOUNTD_EMAIL_ENUMERATION_PROTECTION`; on by default, as
    /// production Firebase since 2023, off for `demo-` projects).
    var emailEnumerationProtection = false
    /// Fewest characters a password may have (`ACCOUNTD_PASSWORD_MIN_LENGTH`, Firebase's 6).
    var passwordMinimumLength = 6
    /// How recent a sign-in password/email changes and deletion need (`ACCOUNTD_RECENT_LOGIN_SECONDS`, 300; 0 = off).
    var recentLoginSeconds: Int64 = 300
    /// The URL the service is reached at from browsers (`ACCOUNTD_PUBLIC_URL`, default http://HOST:PORT).
    var publicURL: String?
    /// Where action links point (`ACCOUNTD_ACTION_HANDLER_URL`, default PUBLIC_URL/__/auth/action).
    var actionHandlerURL: String?
    /// Hosts app links may use (`ACCOUNTD_LINK_DOMAINS`, default the action handler's host).
    var linkDomains: [String]?
    /// Legacy Dynamic Links domains (`ACCOUNTD_DYNAMIC_LINK_DOMAINS`).
    var dynamicLinkDomains: [String] = []
    /// The product name in emails (`ACCOUNTD_PRODUCT_NAME`).
    var productName = "accountd"
    /// The reCAPTCHA site key the SDKs are told (`ACCOUNTD_RECAPTCHA_SITE_KEY`); never enforced.
    var recaptchaSiteKey: String?
    /// The project's number (`ACCOUNTD_PROJECT_NUMBER`, digits), where Google answers with it: provider
    /// configs' `name`, `/v1/projects`' `projectId`, the token route's `project_id`. Default: the project id.
    var projectNumber: String?
    /// `ACCOUNTD_MAIL_*`, `ACCOUNTD_SMTP_URL`, `ACCOUNTD_WEBHOOK_*`: read by the mail transport.
    var mailEnvironment: [String: String] = [:]
    /// Whether this process delivers queued email (tests read the outbox instead).
    var deliversEmail = true
    /// How long the previous refresh token stays tolerated (`ACCOUNTD_REFRESH_REUSE_GRACE_SECONDS`, 10).
    var refreshReuseGraceSeconds: Double = 10
    /// How many verified ID tokens each replica remembers (`ACCOUNTD_ID_TOKEN_CACHE_ENTRIES`, 10,000; 0 = off).
    var verifiedTokenCacheEntries = 10_000
    /// A folder whose `layout.html` and `messages.LANG.json` replace the action page's built-in ones (`ACCOUNTD_ACTION_TEMPLATES_DIR`).
    var actionTemplatesDirectory: String?
    /// An `https:` or `data:image/` logo shown on the action page (`ACCOUNTD_PRODUCT_LOGO_URL`).
    var productLogoURL: String?
    /// How long a connection may sit with nothing read between requests, or while its request
    /// head arrives (`ACCOUNTD_HTTP_IDLE_TIMEOUT_SECONDS`, 60).
    var httpIdleTimeoutSeconds: Int64 = 60
    /// How long a request may take from its head to its response's head, however steadily its
    /// bytes trickle in (`ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS`, 30): still arriving, its
    /// connection closes; arrived, it is answered 503.
    var httpRequestTimeoutSeconds: Int64 = 30
    /// How long start-up (migrations, the signing key) waits for PostgreSQL before the process
    /// gives up (`ACCOUNTD_STARTUP_DB_WAIT_SECONDS`, 60): a database that is slow or restarting
    /// while replicas roll is waited for, not a request deadline's few seconds.
    var startupDatabaseWaitSeconds: Int64 = 60
    /// How long one fetch from an identity provider or a signer's `keysUrl` may take
    /// (`ACCOUNTD_IDP_FETCH_TIMEOUT_SECONDS`, 5; a code exchange twice that).
    var idpFetchTimeoutSeconds: Int64 = 5
    /// The abuse limits (`ACCOUNTD_ABUSE_LIMITS`, `ACCOUNTD_LIMIT_<BUCKET>`, `ACCOUNTD_LOCKOUT_*`,
    /// `ACCOUNTD_KNOWN_NETWORK_DAYS`); on by default, off for `demo-` projects.
    var abuseLimits = AbuseLimitSettings(enabled: false)
    /// Password hashes that may run or wait at once before sign-ins are refused with 503
    /// (`ACCOUNTD_HASH_QUEUE_LIMIT`, default 32 per core).
    var hashQueueLimit: Int?
    /// Proxies whose `X-Forwarded-For` names the client (`ACCOUNTD_TRUSTED_PROXIES`, CIDRs; none).
    var trustedProxies: [IPNetwork] = []
    /// The Admin SDK's unsigned emulator-mode custom tokens accepted
    /// (`ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS`; `demo-` projects only, federation-and-limits.md §C.6).
    var acceptUnsignedCustomTokens = false
    /// §A.13's insecure IdP test mode (`ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS`; `demo-` projects only).
    var acceptUnverifiedIdPTokens = false
    /// A PEM file of CA certificates trusted for identity providers' HTTPS, beside the system's
    /// (`ACCOUNTD_IDP_CA_FILE`: an internal issuer behind a private CA).
    var idpCAFile: String?

    /// Who may call, derived from the keys and tokens.
    var accessPolicy: AccessPolicy {
        AccessPolicy(projectID: projectID, apiKeys: apiKeys, adminTokens: adminTokens, trustedProxies: trustedProxies)
    }

    /// Whether the project id is one of Firebase's local-only `demo-` projects.
    var isDemoProject: Bool { projectID.hasPrefix("demo-") }

    /// What the public listener serves: everything for a `demo-` project (the emulator's one host),
    /// apps only for a real one, whose admins use the admin listener.
    var publicListener: Listener { isDemoProject ? .combined : .publicOnly }

    /// The admin listener's default port, next to the Firebase SDKs' local auth port 9099.
    static let defaultAdminPort = 9098

    /// The Admin SDK's emulator-mode bearer (`Authorization: Bearer owner`), which anyone can guess.
    static let wellKnownAdminToken = "owner"

    /// How browsers reach this server: `ACCOUNTD_PUBLIC_URL`, else the listen address, where a
    /// wildcard (`0.0.0.0`, `::`) stands for loopback (only `demo-` projects start without a public
    /// URL on a wildcard) and an IPv6 literal is bracketed.
    var effectivePublicURL: String {
        if let publicURL { return publicURL }
        let port = self.port == 0 ? 9099 : self.port
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if Self.isWildcard(bare) { return "http://127.0.0.1:\(port)" }
        return bare.contains(":") ? "http://[\(bare)]:\(port)" : "http://\(bare):\(port)"
    }

    /// Whether `host` listens on every interface (no address a browser could be sent to).
    static func isWildcard(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare.isEmpty || bare == "*" || IPAddress.canonicalBytes(bare).map { $0.allSatisfy { $0 == 0 } } == true
    }

    /// An estimate of the secret bits in an admin token, from its length and alphabet: 4 a hex
    /// digit, 6 a base64 character, log2(95) any other printable one. A token of fewer than 10
    /// different characters, or one that repeats a shorter run (`adminadminadmin…`), has none: what
    /// `openssl rand` prints has 12 or more.
    static func estimatedBits(_ token: String) -> Double {
        let characters = Array(token.unicodeScalars)
        guard Set(characters).count >= 10 else { return 0 }
        for period in 1...max(1, characters.count / 2) {
            if (period..<characters.count).allSatisfy({ characters[$0] == characters[$0 - period] }) { return 0 }
        }
        let hex =
            characters.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
            || characters.allSatisfy { ("0"..."9").contains($0) || ("A"..."F").contains($0) }
        let base64 = characters.allSatisfy {
            ("0"..."9").contains($0) || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || "+/-_=".unicodeScalars.contains($0)
        }
        let significant = characters.filter { $0 != "=" }.count
        return Double(significant) * (hex ? 4 : base64 ? 6 : log2(95))
    }

    /// The fewest estimated bits an admin token of a real project may carry.
    static let minimumAdminTokenBits = 128.0

    /// Whether `host` names only this machine (the loopback interface).
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare == "::1" { return true }
        return IPNetwork("127.0.0.0/8")!.contains(bare)
    }
}

/// A configuration the server refuses to start with; the message lists every problem and the
/// variable that fixes it.
struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    var problems: [String]
    var description: String {
        "accountd cannot start:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// Raw settings as strings, from options or the environment (options win).
struct ConfigurationInput: Sendable {
    var databaseURL: String?
    var host: String?
    var port: String?
    var adminHost: String?
    var adminPort: String?
    var projectID: String?
    var apiKeys: String?
    var adminTokens: String?
    var authorizedDomains: String?
    var keyEncryptionKey: String?
    var logLevel: String?
    var migrationsDirectory: String?
    var dataDirectory: String?
    var migrate: Bool = false
    /// Tuning knobs read only from the environment (`ACCOUNTD_ARGON2_MEMORY_KIB`, …).
    var environment: [String: String] = [:]

    /// Fills every setting not given on the command line from the environment.
    func merged(withEnvironment environment: [String: String]) -> ConfigurationInput {
        func pick(_ option: String?, _ name: String) -> String? {
            if let option, !option.isEmpty { return option }
            if let value = environment[name], !value.isEmpty { return value }
            return nil
        }
        var merged = self
        merged.databaseURL = pick(databaseURL, "DATABASE_URL")
        merged.host = pick(host, "ACCOUNTD_HOST")
        merged.port = pick(port, "ACCOUNTD_PORT")
        merged.adminHost = pick(adminHost, "ACCOUNTD_ADMIN_HOST")
        merged.adminPort = pick(adminPort, "ACCOUNTD_ADMIN_PORT")
        merged.projectID = pick(projectID, "ACCOUNTD_PROJECT_ID")
        merged.apiKeys = pick(apiKeys, "ACCOUNTD_API_KEYS")
        merged.adminTokens = pick(adminTokens, "ACCOUNTD_ADMIN_TOKENS")
        merged.authorizedDomains = pick(authorizedDomains, "ACCOUNTD_AUTHORIZED_DOMAINS")
        merged.keyEncryptionKey = pick(keyEncryptionKey, "ACCOUNTD_KEY_ENCRYPTION_KEY")
        merged.logLevel = pick(logLevel, "LOG_LEVEL")
        merged.migrationsDirectory = pick(migrationsDirectory, "ACCOUNTD_MIGRATIONS_DIR")
        merged.dataDirectory = pick(dataDirectory, "ACCOUNTD_DATA_DIR")
        merged.migrate = migrate || ["1", "true", "yes"].contains(environment["ACCOUNTD_MIGRATE"]?.lowercased() ?? "")
        merged.environment = environment
        return merged
    }
}

extension Configuration {
    /// Validates the input. A `demo-` project may run on development defaults (any API key, admin
    /// token `owner`, a key-encryption key derived from the project id), each recorded in
    /// ``developmentDefaults``; any other project must configure them or is refused.
    init(_ input: ConfigurationInput) throws {
        var problems: [String] = []
        var defaults: [String] = []
        let projectID = input.projectID ?? "demo-project"
        let isDemo = projectID.hasPrefix("demo-")
        if !projectID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) || projectID.isEmpty
            || projectID.count > 63
        {
            problems.append("ACCOUNTD_PROJECT_ID \"\(projectID)\" is not a project id (letters, digits and '-', at most 63)")
        }
        let projectNumber = input.environment["ACCOUNTD_PROJECT_NUMBER"].flatMap { $0.isEmpty ? nil : $0 }
        if let projectNumber, projectNumber.count > 20 || !projectNumber.allSatisfy({ $0.isASCII && $0.isNumber }) {
            problems.append("ACCOUNTD_PROJECT_NUMBER \"\(projectNumber.prefix(40))\" is not a project number (digits, at most 20)")
        }

        var databaseURL: DatabaseURL?
        if let raw = input.databaseURL {
            do { databaseURL = try DatabaseURL(raw) } catch { problems.append("\(error)") }
        }

        let port = input.port.map { Int($0) } ?? 9099
        if port == nil || !(0...65535).contains(port!) {
            problems.append("ACCOUNTD_PORT must be a port number from 0 to 65535")
        }

        let adminPort = input.adminPort.map { Int($0) } ?? Self.defaultAdminPort
        if adminPort == nil || !(0...65535).contains(adminPort!) {
            problems.append("ACCOUNTD_ADMIN_PORT must be a port number from 0 to 65535")
        } else if let port, port != 0, port == adminPort {
            problems.append("ACCOUNTD_ADMIN_PORT must differ from ACCOUNTD_PORT (\(port)): admins have a listener of their own")
        }
        let adminHost = input.adminHost ?? "127.0.0.1"

        var apiKeys: Set<String>?
        if let raw = input.apiKeys {
            apiKeys = Set(Self.list(raw))
            if apiKeys!.isEmpty { problems.append("ACCOUNTD_API_KEYS is empty") }
        } else if isDemo {
            defaults.append("any API key is accepted (set ACCOUNTD_API_KEYS)")
        } else {
            problems.append("ACCOUNTD_API_KEYS is not set: list the API keys apps send, comma-separated")
        }

        var adminTokens: [String: String] = [:]
        if let raw = input.adminTokens {
            for (index, entry) in Self.list(raw).enumerated() {
                if let colon = entry.firstIndex(of: ":") {
                    let name = String(entry[..<colon])
                    let token = String(entry[entry.index(after: colon)...])
                    if name.isEmpty || token.isEmpty {
                        problems.append("ACCOUNTD_ADMIN_TOKENS entry \(index + 1) must be NAME:TOKEN or TOKEN")
                    }
                    adminTokens[token] = name
                } else {
                    adminTokens[entry] = entry == "owner" ? "owner" : "admin-\(index + 1)"
                }
            }
            if adminTokens.isEmpty { problems.append("ACCOUNTD_ADMIN_TOKENS is empty") }
        } else if isDemo {
            adminTokens = ["owner": "owner"]
            defaults.append("admin token is \"owner\" (set ACCOUNTD_ADMIN_TOKENS)")
        } else {
            problems.append("ACCOUNTD_ADMIN_TOKENS is not set: give NAME:TOKEN pairs, comma-separated")
        }

        var keyEncryptionKey: [UInt8] = []
        if let raw = input.keyEncryptionKey {
            if let key = Self.decodeKey(raw) {
                keyEncryptionKey = key
            } else {
                problems.append("ACCOUNTD_KEY_ENCRYPTION_KEY must be 32 bytes, base64 or 64 hex digits (openssl rand -base64 32)")
            }
        } else if isDemo {
            keyEncryptionKey = Array(SHA256.hash(data: Data("accountd development key-encryption key \(projectID)".utf8)))
            defaults.append("the key-encryption key is derived from the project id and is NOT secret (set ACCOUNTD_KEY_ENCRYPTION_KEY)")
        } else {
            problems.append("ACCOUNTD_KEY_ENCRYPTION_KEY is not set: give 32 random bytes in base64 (openssl rand -base64 32)")
        }

        let logLevel = input.logLevel.map { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        if logLevel == nil {
            problems.append("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
        }

        func flag(_ name: String) -> Bool {
            ["1", "true", "yes", "on"].contains(input.environment[name]?.lowercased() ?? "")
        }
        func number(_ name: String, _ fallback: Int64, _ range: ClosedRange<Int64>) -> Int64 {
            guard let raw = input.environment[name] else { return fallback }
            guard let value = Int64(raw), range.contains(value) else {
                problems.append("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                return fallback
            }
            return value
        }
        let argon2Memory = number("ACCOUNTD_ARGON2_MEMORY_KIB", 19 * 1024, 8...4_194_304)
        let argon2Iterations = number("ACCOUNTD_ARGON2_ITERATIONS", 2, 1...64)
        let recentLogin = number("ACCOUNTD_RECENT_LOGIN_SECONDS", 300, 0...31_536_000)
        let grace = number("ACCOUNTD_REFRESH_REUSE_GRACE_SECONDS", 10, 0...3600)
        let minimumPassword = number("ACCOUNTD_PASSWORD_MIN_LENGTH", 6, 6...4096)
        let maximumConnections = number("ACCOUNTD_DB_MAX_CONNECTIONS", 20, 1...1000)
        let minimumConnections = number("ACCOUNTD_DB_MIN_CONNECTIONS", maximumConnections, 0...maximumConnections)
        let keepAlive = number("ACCOUNTD_DB_KEEPALIVE_SECONDS", 0, 0...86400)
        let lockTimeout = number("ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS", 5, 0...3600)
        let statementTimeout = number("ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS", 10, 0...86400)
        let deadline = number("ACCOUNTD_REQUEST_DEADLINE_SECONDS", 5, 1...600)
        let tokenCache = number("ACCOUNTD_ID_TOKEN_CACHE_ENTRIES", 10_000, 0...10_000_000)
        let idleTimeout = number("ACCOUNTD_HTTP_IDLE_TIMEOUT_SECONDS", 60, 1...3600)
        let requestTimeout = number("ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS", 30, 1...3600)
        let startupWait = number("ACCOUNTD_STARTUP_DB_WAIT_SECONDS", 60, 1...3600)
        let idpFetchTimeout = number("ACCOUNTD_IDP_FETCH_TIMEOUT_SECONDS", 5, 1...120)
        let abuseLimits = Self.abuseLimits(input.environment, isDemo: isDemo, problems: &problems)
        var warnings: [String] = []
        // A demo project defaults to the log transport; a real one must choose, and the log (which
        // prints live sign-in links) only explicitly.
        switch input.environment["ACCOUNTD_MAIL_TRANSPORT"]?.lowercased() {
        case nil, "":
            if !isDemo {
                problems.append(
                    "ACCOUNTD_MAIL_TRANSPORT is not set: choose smtp or webhook (log prints live sign-in links; set it explicitly to accept that)"
                )
            }
        case "log":
            if !isDemo {
                warnings.append(
                    "ACCOUNTD_MAIL_TRANSPORT=log: every email, with its live sign-in and reset link, is written to the log instead of sent")
            }
        default: break
        }
        /// An on/off switch; `fallback` when unset.
        func toggle(_ name: String, _ fallback: Bool) -> Bool {
            switch input.environment[name]?.lowercased() {
            case nil, "": return fallback
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default:
                problems.append("\(name) must be on or off")
                return fallback
            }
        }
        let protection = toggle("ACCOUNTD_EMAIL_ENUMERATION_PROTECTION", !isDemo)
        // The emulator allows anonymous sign-up; a real project turns it on explicitly.
        let allowAnonymous = toggle("ACCOUNTD_ALLOW_ANONYMOUS", isDemo)
        // First-format refresh tokens: `auto` (the default) decides at start from the sessions.
        let version1: Bool?
        switch input.environment["ACCOUNTD_REFRESH_ACCEPT_V1"]?.lowercased() {
        case nil, "", "auto": version1 = nil
        default: version1 = toggle("ACCOUNTD_REFRESH_ACCEPT_V1", true)
        }
        if !isDemo {
            // An admin token is a password to every account: a real project's must be a secret no one
            // guesses (second review). The one exception is the Admin SDK's emulator token `owner`,
            // which that SDK always sends: on loopback (this machine only), or, with the explicit
            // switch, on a network the operator says is private.
            for (token, name) in adminTokens.sorted(by: { $0.value < $1.value }) {
                if token == Self.wellKnownAdminToken {
                    guard !Self.isLoopback(adminHost) else { continue }
                    if flag("ACCOUNTD_ALLOW_WELL_KNOWN_ADMIN_TOKEN") {
                        warnings.append(
                            "the admin token \"owner\" (the Admin SDK's emulator token, known to everyone) is accepted on \(adminHost), outside loopback"
                        )
                    } else {
                        problems.append(
                            "ACCOUNTD_ADMIN_TOKENS has the well-known token \"owner\" and ACCOUNTD_ADMIN_HOST \(adminHost) is not loopback: anyone who reaches it is an admin. Use a secret token (accountctl and the REST API take any), or set ACCOUNTD_ALLOW_WELL_KNOWN_ADMIN_TOKEN=1 if the network itself is private"
                        )
                    }
                    continue
                }
                let bits = Self.estimatedBits(token)
                if bits < Self.minimumAdminTokenBits {
                    problems.append(
                        "ACCOUNTD_ADMIN_TOKENS entry \(name) carries about \(Int(bits)) bits: a real project's admin tokens need at least \(Int(Self.minimumAdminTokenBits)) (openssl rand -base64 24)"
                    )
                }
            }
        }
        let host = input.host ?? "127.0.0.1"
        // Empty is unset (compose passes `${VAR:-}` through as an empty string).
        let publicURL = input.environment["ACCOUNTD_PUBLIC_URL"].flatMap {
            $0.isEmpty ? nil : $0.hasSuffix("/") ? String($0.dropLast()) : $0
        }
        let actionHandlerURL = input.environment["ACCOUNTD_ACTION_HANDLER_URL"].flatMap { $0.isEmpty ? nil : $0 }
        for (name, url) in [("ACCOUNTD_PUBLIC_URL", publicURL), ("ACCOUNTD_ACTION_HANDLER_URL", actionHandlerURL)] {
            if let url, ActionCodeSettings.httpHost(url) == nil {
                problems.append("\(name) \"\(url.prefix(80))\" is not an absolute http(s) URL with a host")
            }
        }
        if !isDemo && Self.isWildcard(host) && publicURL == nil && actionHandlerURL == nil {
            // Email links point at the public URL: derived from a wildcard it is no address at all.
            problems.append(
                "ACCOUNTD_HOST \(host) listens on every interface and ACCOUNTD_PUBLIC_URL is not set: give the URL browsers reach accountd at (https://auth.example.com), which email links point to"
            )
        }
        let acceptUnsigned = flag("ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS")
        if acceptUnsigned {
            if isDemo {
                defaults.append(
                    "unsigned custom tokens are accepted: anyone can sign in as any uid (ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS)")
            } else {
                problems.append("ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS lets anyone sign in as any uid: only demo- projects may set it")
            }
        }
        let acceptUnverified = flag("ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS")
        if acceptUnverified {
            if isDemo {
                defaults.append(
                    "IdP tokens are accepted unverified (unsigned or bare JSON): anyone can sign in as any identity (ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS)"
                )
            } else {
                problems.append("ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS accepts unsigned IdP tokens: only demo- projects may set it")
            }
        }
        let idpCAFile = input.environment["ACCOUNTD_IDP_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        if let idpCAFile, !FileManager.default.isReadableFile(atPath: idpCAFile) {
            problems.append("ACCOUNTD_IDP_CA_FILE \(idpCAFile) cannot be read")
        }
        let hashQueue = input.environment["ACCOUNTD_HASH_QUEUE_LIMIT"] == nil ? nil : number("ACCOUNTD_HASH_QUEUE_LIMIT", 64, 1...1_000_000)
        var trustedProxies: [IPNetwork] = []
        for entry in Self.list(input.environment["ACCOUNTD_TRUSTED_PROXIES"] ?? "") {
            if let network = IPNetwork(entry) {
                trustedProxies.append(network)
                if network.coversEverything {
                    warnings.append(
                        "ACCOUNTD_TRUSTED_PROXIES entry \(entry) holds every address: any client can name itself in X-Forwarded-For and choose its own abuse-limit key"
                    )
                }
            } else {
                problems.append("ACCOUNTD_TRUSTED_PROXIES entry \"\(entry)\" is not an address or CIDR (10.0.0.0/8, fd00::/8)")
            }
        }
        if deadline >= requestTimeout {
            // The request timeout answers 503 for what nothing else bounded; a deadline as long
            // would leave a request waiting for a connection after its answer.
            problems.append(
                "ACCOUNTD_REQUEST_DEADLINE_SECONDS (\(deadline)) must be shorter than ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS (\(requestTimeout))"
            )
        }

        if !problems.isEmpty {
            if !isDemo {
                problems.append("only projects whose id starts with demo- run on development defaults")
            }
            throw ConfigurationError(problems: problems)
        }
        self.init(
            databaseURL: databaseURL,
            host: host,
            port: port!,
            adminHost: adminHost,
            adminPort: adminPort!,
            projectID: projectID,
            apiKeys: apiKeys,
            adminTokens: adminTokens,
            authorizedDomains: input.authorizedDomains.map { Self.list($0).map { $0.lowercased() } } ?? ["localhost"],
            keyEncryptionKey: keyEncryptionKey,
            logLevel: logLevel!,
            migrationsDirectory: input.migrationsDirectory ?? "migrations",
            dataDirectory: input.dataDirectory ?? ".accountd",
            migrateOnStart: input.migrate,
            developmentDefaults: defaults,
            warnings: warnings,
            databasePool: DatabasePool(
                maximumConnections: Int(maximumConnections), minimumConnections: Int(minimumConnections),
                keepAliveSeconds: keepAlive == 0 ? nil : keepAlive, waitSeconds: deadline,
                lockTimeoutSeconds: lockTimeout == 0 ? nil : lockTimeout,
                statementTimeoutSeconds: statementTimeout == 0 ? nil : statementTimeout),
            passwordHashParameters: .init(memoryKiB: Int(argon2Memory), iterations: Int(argon2Iterations)),
            allowAnonymous: allowAnonymous,
            acceptVersion1RefreshTokens: version1,
            emailEnumerationProtection: protection,
            passwordMinimumLength: Int(minimumPassword),
            recentLoginSeconds: recentLogin,
            publicURL: publicURL,
            actionHandlerURL: actionHandlerURL,
            linkDomains: input.environment["ACCOUNTD_LINK_DOMAINS"].map { Self.list($0).map { $0.lowercased() } },
            dynamicLinkDomains: input.environment["ACCOUNTD_DYNAMIC_LINK_DOMAINS"].map { Self.list($0).map { $0.lowercased() } } ?? [],
            productName: input.environment["ACCOUNTD_PRODUCT_NAME"] ?? "accountd",
            recaptchaSiteKey: input.environment["ACCOUNTD_RECAPTCHA_SITE_KEY"].flatMap { $0.isEmpty ? nil : $0 },
            projectNumber: projectNumber,
            mailEnvironment: input.environment.filter {
                $0.key.hasPrefix("ACCOUNTD_MAIL_") || $0.key.hasPrefix("ACCOUNTD_SMTP_") || $0.key.hasPrefix("ACCOUNTD_WEBHOOK_")
            },
            refreshReuseGraceSeconds: Double(grace),
            verifiedTokenCacheEntries: Int(tokenCache),
            actionTemplatesDirectory: input.environment["ACCOUNTD_ACTION_TEMPLATES_DIR"],
            productLogoURL: input.environment["ACCOUNTD_PRODUCT_LOGO_URL"],
            httpIdleTimeoutSeconds: idleTimeout,
            httpRequestTimeoutSeconds: requestTimeout,
            startupDatabaseWaitSeconds: startupWait,
            idpFetchTimeoutSeconds: idpFetchTimeout,
            abuseLimits: abuseLimits,
            hashQueueLimit: hashQueue.map(Int.init),
            trustedProxies: trustedProxies,
            acceptUnsignedCustomTokens: acceptUnsigned,
            acceptUnverifiedIdPTokens: acceptUnverified,
            idpCAFile: idpCAFile
        )
    }

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

    private static func list(_ raw: String) -> [String] {
        raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func decodeKey(_ raw: String) -> [UInt8]? {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, text.allSatisfy(\.isHexDigit) {
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                bytes.append(UInt8(text[index..<next], radix: 16)!)
                index = next
            }
            return bytes
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return nil }
        return Array(data)
    }
}
