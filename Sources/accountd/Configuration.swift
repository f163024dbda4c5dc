import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import Foundation
import Logging

/// Everything the server is told at start-up, read once here at the edge and passed down as
/// values, in sections: where it listens, who may call, its database, its keys, the accounts'
/// rules, email, federation, abuse limits. Built from command-line options over environment
/// variables (``init(_:)``, each section parsed by its own reader in Configuration+Reading.swift).
struct Configuration: Sendable {
    /// The Firebase project id served.
    var projectID: String
    /// The project's number (`ACCOUNTD_PROJECT_NUMBER`, digits), where Google answers with it: provider
    /// configs' `name`, `/v1/projects`' `projectId`, the token route's `project_id`. Default: the project id.
    var projectNumber: String?
    /// Log level (`LOG_LEVEL`).
    var logLevel: Logger.Level = .info
    /// Log line format (`ACCOUNTD_LOG_FORMAT`: `text`, the default, or `json`).
    var logFormat: LineLogHandler.Format = .text
    /// Whether the components count and time their work and the admin listener serves `/metrics`
    /// (`ACCOUNTD_METRICS`, on by default; off is for measuring what the metrics cost).
    var metricsEnabled = true
    var listen = Listen()
    var access = Access()
    var database = DatabaseSettings()
    var keys = Keys()
    var accounts = Accounts()
    var email = Email()
    var federation = Federation()
    var phone = Phone()
    /// The abuse limits (`ACCOUNTD_ABUSE_LIMITS`, `ACCOUNTD_LIMIT_<BUCKET>`, `ACCOUNTD_LOCKOUT_*`,
    /// `ACCOUNTD_KNOWN_NETWORK_DAYS`); on by default, off for `demo-` projects.
    var abuseLimits = AbuseLimitSettings(enabled: false)
    /// Development defaults in force, each a warning the server prints loudly at start.
    var developmentDefaults: [String] = []
    /// Choices made explicitly that are unsafe for real users, each printed loudly at start.
    var warnings: [String] = []

    /// Where the server listens and how long it waits for a client.
    struct Listen: Sendable {
        /// Listen address (`ACCOUNTD_HOST`).
        var host = "127.0.0.1"
        /// Listen port (`ACCOUNTD_PORT`, 9099; 0 picks a free one, as tests do).
        var port = 9099
        /// The admin listener's address (`ACCOUNTD_ADMIN_HOST`, default loopback): admin RPCs only.
        var adminHost = "127.0.0.1"
        /// The admin listener's port (`ACCOUNTD_ADMIN_PORT`, default 9098; 0 picks a free one).
        var adminPort = Configuration.defaultAdminPort
        /// The URL the service is reached at from browsers (`ACCOUNTD_PUBLIC_URL`, default http://HOST:PORT).
        var publicURL: String?
        /// How long a connection may sit with nothing read between requests, or while its request
        /// head arrives (`ACCOUNTD_HTTP_IDLE_TIMEOUT_SECONDS`, 60).
        var idleTimeoutSeconds: Int64 = 60
        /// How long a request may take from its head to its response's head, however steadily its
        /// bytes trickle in (`ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS`, 30): still arriving, its
        /// connection closes; arrived, it is answered 503.
        var requestTimeoutSeconds: Int64 = 30
        /// Proxies whose `X-Forwarded-For` names the client (`ACCOUNTD_TRUSTED_PROXIES`, CIDRs; none).
        var trustedProxies: [IPNetwork] = []
    }

    /// Who may call.
    struct Access: Sendable {
        /// API keys accepted (`ACCOUNTD_API_KEYS`); `nil` accepts any (demo projects only).
        var apiKeys: Set<String>?
        /// Admin bearer tokens, token → name (`ACCOUNTD_ADMIN_TOKENS`).
        var adminTokens: [String: String] = [:]
    }

    /// The database and its schema.
    struct DatabaseSettings: Sendable {
        /// The database (`DATABASE_URL`); `nil` runs a private local cluster under ``dataDirectory``.
        var url: DatabaseURL?
        /// A read replica for the admin listings that tolerate its lag (`ACCOUNTD_DATABASE_READ_URL`):
        /// `batchGet`, `downloadAccount`, `query`. Nil: they read the primary.
        var readURL: DatabaseURL?
        /// Where the connections that need a session of their own go (the revocation listener's
        /// `LISTEN`, the migrations' advisory lock), when `url` is a pooler in transaction mode
        /// (`ACCOUNTD_DATABASE_SESSION_URL`); nil: `url`.
        var sessionURL: DatabaseURL?
        /// The connection pool (`ACCOUNTD_DB_MAX_CONNECTIONS`, `ACCOUNTD_DB_MIN_CONNECTIONS`,
        /// `ACCOUNTD_DB_KEEPALIVE_SECONDS`, `ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS`,
        /// `ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS`); its `waitSeconds` is the request deadline
        /// (`ACCOUNTD_REQUEST_DEADLINE_SECONDS`, default 5): how long a request may wait for a
        /// database connection before it answers 503. See ``PoolSettings``.
        var pool = PoolSettings()
        /// Where the numbered SQL files are (`ACCOUNTD_MIGRATIONS_DIR`).
        var migrationsDirectory = "migrations"
        /// Where the local cluster lives when there is no database URL (`ACCOUNTD_DATA_DIR`).
        var dataDirectory = ".accountd"
        /// Apply pending migrations at start instead of refusing to start (`ACCOUNTD_MIGRATE`).
        var migrateOnStart = false
        /// How long start-up (migrations, the signing key) waits for PostgreSQL before the process
        /// gives up (`ACCOUNTD_STARTUP_DB_WAIT_SECONDS`, 60): a database that is slow or restarting
        /// while replicas roll is waited for, not a request deadline's few seconds.
        var startupWaitSeconds: Int64 = 60
    }

    /// The secrets the server derives its keys from, and how tokens are checked.
    struct Keys: Sendable {
        /// The 32-byte key-encryption key that seals signing keys and derives refresh-token keys
        /// (`ACCOUNTD_KEY_ENCRYPTION_KEY`).
        var keyEncryptionKey: [UInt8] = []
        /// Refresh tokens of the first format (issued before version 2, whose MAC needs the session
        /// read first) still refreshed (`ACCOUNTD_REFRESH_ACCEPT_V1`: `on`, `off`, or `auto`, nil:
        /// while at start some live session still holds one).
        var acceptVersion1RefreshTokens: Bool? = nil
        /// How many verified ID tokens each replica remembers (`ACCOUNTD_ID_TOKEN_CACHE_ENTRIES`, 10,000; 0 = off).
        var verifiedTokenCacheEntries = 10_000
    }

    /// The accounts' rules (identity-toolkit.md §1.6) and the cost of their passwords.
    struct Accounts: Sendable {
        /// Domains a continue URL may point at (`ACCOUNTD_AUTHORIZED_DOMAINS`).
        var authorizedDomains = ["localhost"]
        /// Anonymous sign-up (`ACCOUNTD_ALLOW_ANONYMOUS`; off, on for `demo-` projects as in the emulator).
        var allowAnonymous = false
        /// Email enumeration protection (`ACCOUNTD_EMAIL_ENUMERATION_PROTECTION`; on by default, as
        /// production Firebase since 2023, off for `demo-` projects).
        var emailEnumerationProtection = false
        /// Fewest characters a password may have (`ACCOUNTD_PASSWORD_MIN_LENGTH`, Firebase's 6).
        var passwordMinimumLength = 6
        /// How recent a sign-in password/email changes and deletion need (`ACCOUNTD_RECENT_LOGIN_SECONDS`, 300; 0 = off).
        var recentLoginSeconds: Int64 = 300
        /// How long the previous refresh token stays tolerated (`ACCOUNTD_REFRESH_REUSE_GRACE_SECONDS`, 10).
        var refreshReuseGraceSeconds: Double = 10
        /// argon2id cost of new password hashes (`ACCOUNTD_ARGON2_MEMORY_KIB`, `ACCOUNTD_ARGON2_ITERATIONS`).
        var passwordHashParameters: Argon2idHasher.Parameters = .owasp
        /// Password hashes that may run or wait at once before sign-ins are refused with 503
        /// (`ACCOUNTD_HASH_QUEUE_LIMIT`, default 32 per core).
        var hashQueueLimit: Int?
    }

    /// Email: where its links point, what it looks like, how it leaves.
    struct Email: Sendable {
        /// Where action links point (`ACCOUNTD_ACTION_HANDLER_URL`, default PUBLIC_URL/__/auth/action).
        var actionHandlerURL: String?
        /// Hosts app links may use (`ACCOUNTD_LINK_DOMAINS`, default the action handler's host).
        var linkDomains: [String]?
        /// Legacy Dynamic Links domains (`ACCOUNTD_DYNAMIC_LINK_DOMAINS`).
        var dynamicLinkDomains: [String] = []
        /// The product name in emails (`ACCOUNTD_PRODUCT_NAME`).
        var productName = "accountd"
        /// An `https:` or `data:image/` logo shown on the action page (`ACCOUNTD_PRODUCT_LOGO_URL`).
        var productLogoURL: String?
        /// A folder whose `layout.html` and `messages.LANG.json` replace the action page's built-in
        /// ones (`ACCOUNTD_ACTION_TEMPLATES_DIR`).
        var actionTemplatesDirectory: String?
        /// The reCAPTCHA site key the SDKs are told (`ACCOUNTD_RECAPTCHA_SITE_KEY`); never enforced.
        var recaptchaSiteKey: String?
        /// `ACCOUNTD_MAIL_*`, `ACCOUNTD_SMTP_URL`, `ACCOUNTD_WEBHOOK_*`: read by the mail transport.
        var transportEnvironment: [String: String] = [:]
        /// Whether this process delivers queued email (tests read the outbox instead).
        var delivers = true
    }

    /// Phone sign-in's SMS (mfa-phone-tenants.md §A.7); whether phone sign-in is on is the
    /// configuration resource's (`v2/projects/{p}/config`).
    struct Phone: Sendable {
        /// How SMS leave (`ACCOUNTD_SMS_TRANSPORT`: `none`, `log`, `webhook`; `log` for `demo-`
        /// projects, `none` otherwise).
        var transport = SMSTransportChoice.none
        /// `ACCOUNTD_SMS_WEBHOOK_URL` and `ACCOUNTD_SMS_WEBHOOK_SECRET` (at least 16 characters).
        var webhookURL: String?
        var webhookSecret: String?
        /// How long a code lives (`ACCOUNTD_SMS_CODE_TTL`, 600 s; 60–1800).
        var codeLifetimeSeconds: Int64 = 600
        /// `%APP_NAME%` of the SMS text (`ACCOUNTD_APP_NAME`, default the action handler's host).
        var appName: String?
        /// The demo test inbox of codes (`ACCOUNTD_TEST_SMS_INBOX=1`, `demo-` projects only).
        var testInbox = false
    }

    enum SMSTransportChoice: String, Sendable {
        case none, log, webhook
    }

    /// Identity providers and custom tokens.
    struct Federation: Sendable {
        /// How long one fetch from an identity provider or a signer's `keysUrl` may take
        /// (`ACCOUNTD_IDP_FETCH_TIMEOUT_SECONDS`, 5; a code exchange twice that).
        var fetchTimeoutSeconds: Int64 = 5
        /// A PEM file of CA certificates trusted for identity providers' HTTPS, beside the system's
        /// (`ACCOUNTD_IDP_CA_FILE`: an internal issuer behind a private CA).
        var caFile: String?
        /// The Admin SDK's unsigned emulator-mode custom tokens accepted
        /// (`ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS`; `demo-` projects only, federation-and-limits.md §C.6).
        var acceptUnsignedCustomTokens = false
        /// §A.13's insecure IdP test mode (`ACCOUNTD_ACCEPT_UNVERIFIED_IDP_TOKENS`; `demo-` projects only).
        var acceptUnverifiedIdPTokens = false
    }

    /// The project's rules (identity-toolkit.md §1.6).
    var projectSettings: ProjectSettings {
        var settings = ProjectSettings(projectID: projectID)
        settings.authorizedDomains = accounts.authorizedDomains
        settings.allowAnonymous = accounts.allowAnonymous
        settings.emailEnumerationProtection = accounts.emailEnumerationProtection
        settings.recentLoginSeconds = accounts.recentLoginSeconds
        settings.refreshReuseGraceSeconds = accounts.refreshReuseGraceSeconds
        settings.passwordPolicy.minimumLength = accounts.passwordMinimumLength
        settings.actionHandlerURL = email.actionHandlerURL ?? "\(effectivePublicURL)/__/auth/action"
        settings.linkDomains = email.linkDomains ?? [URLComponents(string: settings.actionHandlerURL)?.host ?? listen.host]
        settings.dynamicLinkDomains = email.dynamicLinkDomains
        settings.productName = email.productName
        if let recaptchaSiteKey = email.recaptchaSiteKey { settings.recaptchaSiteKey = recaptchaSiteKey }
        if let projectNumber { settings.projectNumber = projectNumber }
        settings.linkAPIKey = accessPolicy.linkAPIKey
        return settings
    }

    /// Who may call, derived from the keys and tokens.
    var accessPolicy: AccessPolicy {
        AccessPolicy(projectID: projectID, apiKeys: access.apiKeys, adminTokens: access.adminTokens, trustedProxies: listen.trustedProxies)
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
        if let publicURL = listen.publicURL { return publicURL }
        let port = listen.port == 0 ? 9099 : listen.port
        let host = listen.host
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
