import AccountAPI
import AccountCore
import AccountPostgres
import Logging
import PostgresNIO
import Testing

@testable import accountd

@Suite("Configuration from options and environment")
struct ConfigurationTests {
    @Test("a demo project starts on development defaults and says so")
    func demoDefaults() throws {
        let configuration = try Configuration(ConfigurationInput().merged(withEnvironment: [:]))
        #expect(configuration.projectID == "demo-project")
        #expect(configuration.listen.host == "127.0.0.1")
        #expect(configuration.listen.port == 9099)
        #expect(configuration.access.apiKeys == nil)
        #expect(configuration.access.adminTokens == ["owner": "owner"])
        #expect(configuration.accounts.authorizedDomains == ["localhost"])
        #expect(configuration.keys.keyEncryptionKey.count == 32)
        #expect(configuration.database.url == nil)
        #expect(configuration.developmentDefaults.count == 3)
    }

    @Test("a real project without keys, tokens and key-encryption key is refused, listing each")
    func realProjectMustConfigure() {
        #expect {
            try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "acme-prod"]))
        } throws: { error in
            let problems = (error as? ConfigurationError)?.problems ?? []
            return problems.contains { $0.hasPrefix("ACCOUNTD_API_KEYS") }
                && problems.contains { $0.hasPrefix("ACCOUNTD_ADMIN_TOKENS") }
                && problems.contains { $0.hasPrefix("ACCOUNTD_KEY_ENCRYPTION_KEY") }
        }
    }

    @Test("a fully configured project starts; options win over the environment")
    func explicitConfiguration() throws {
        let environment = [
            "ACCOUNTD_PROJECT_ID": "acme-prod",
            "ACCOUNTD_API_KEYS": "k1, k2",
            "ACCOUNTD_ADMIN_TOKENS": "ops:s3cret-7Hq2vX9pL4mZ8wR0a,backend:t0ken-7Hq2vX9pL4mZ8wR0a",
            "ACCOUNTD_KEY_ENCRYPTION_KEY": String(repeating: "ab", count: 32),
            "ACCOUNTD_PORT": "8080",
            "ACCOUNTD_AUTHORIZED_DOMAINS": "Example.com,app.example.com",
            "DATABASE_URL": "postgres://acc:pw@db:5432/accountd",
            "LOG_LEVEL": "debug",
            "ACCOUNTD_MAIL_TRANSPORT": "smtp",
        ]
        var input = ConfigurationInput()
        input.port = "9100"
        let configuration = try Configuration(input.merged(withEnvironment: environment))
        #expect(configuration.listen.port == 9100)
        #expect(configuration.access.apiKeys == ["k1", "k2"])
        #expect(configuration.access.adminTokens == ["s3cret-7Hq2vX9pL4mZ8wR0a": "ops", "t0ken-7Hq2vX9pL4mZ8wR0a": "backend"])
        #expect(configuration.keys.keyEncryptionKey == Array(repeating: 0xab, count: 32))
        #expect(configuration.accounts.authorizedDomains == ["example.com", "app.example.com"])
        #expect(configuration.database.url?.host == "db")
        #expect(configuration.database.url?.database == "accountd")
        #expect(configuration.database.url?.redacted.contains("pw") == false)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.developmentDefaults.isEmpty)
    }

    @Test("malformed values are named")
    func malformedValues() {
        let environment = [
            "ACCOUNTD_PORT": "ninety",
            "ACCOUNTD_KEY_ENCRYPTION_KEY": "too-short",
            "DATABASE_URL": "mysql://x",
            "LOG_LEVEL": "loud",
            // The request timeout is the backstop answer: a deadline as long would wait past it.
            "ACCOUNTD_REQUEST_DEADLINE_SECONDS": "10", "ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS": "10",
        ]
        #expect {
            try Configuration(ConfigurationInput().merged(withEnvironment: environment))
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains("ACCOUNTD_PORT") && text.contains("ACCOUNTD_KEY_ENCRYPTION_KEY")
                && text.contains("DATABASE_URL") && text.contains("LOG_LEVEL")
                && text.contains("ACCOUNTD_REQUEST_DEADLINE_SECONDS (10) must be shorter than ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS (10)")
        }
    }

    @Test("the password policy's minimum is configurable, never below Firebase's 6")
    func passwordPolicy() throws {
        let stricter = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PASSWORD_MIN_LENGTH": "12"]))
        #expect(stricter.projectSettings.passwordPolicy.minimumLength == 12)
        #expect(throws: ConfigurationError.self) {
            try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PASSWORD_MIN_LENGTH": "4"]))
        }
    }

    @Test("the verified-token cache holds 10,000 tokens by default; 0 turns it off; a negative size is refused")
    func verifiedTokenCache() throws {
        #expect(try Configuration(ConfigurationInput().merged(withEnvironment: [:])).keys.verifiedTokenCacheEntries == 10_000)
        let off = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_ID_TOKEN_CACHE_ENTRIES": "0"]))
        #expect(off.keys.verifiedTokenCacheEntries == 0)
        #expect(throws: ConfigurationError.self) {
            try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_ID_TOKEN_CACHE_ENTRIES": "-1"]))
        }
    }

    @Test("the connection pool is warm by default; its size, minimum, keep-alive and time limits are configurable")
    func databasePool() throws {
        let defaults = try Configuration(ConfigurationInput().merged(withEnvironment: [:])).database.pool
        #expect(
            defaults
                == PoolSettings(
                    maximumConnections: 20, minimumConnections: 20, keepAliveSeconds: nil, waitSeconds: 5, lockTimeoutSeconds: 5,
                    statementTimeoutSeconds: 10))
        let connection = try DatabaseURL("postgres://u@db/x").connectionConfiguration(pool: defaults)
        #expect(connection.options.additionalStartupParameters.map { "\($0.0)=\($0.1)" } == ["lock_timeout=5s", "statement_timeout=10s"])
        let unbounded = try Configuration(
            ConfigurationInput().merged(withEnvironment: [
                "ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS": "0", "ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS": "0",
            ]))
        #expect(unbounded.database.pool.lockTimeoutSeconds == nil && unbounded.database.pool.statementTimeoutSeconds == nil)
        #expect(
            try DatabaseURL("postgres://u@db/x").connectionConfiguration(pool: unbounded.database.pool).options.additionalStartupParameters
                .isEmpty)

        let tuned = try Configuration(
            ConfigurationInput().merged(withEnvironment: [
                "ACCOUNTD_DB_MAX_CONNECTIONS": "8", "ACCOUNTD_DB_MIN_CONNECTIONS": "2", "ACCOUNTD_DB_KEEPALIVE_SECONDS": "45",
                "ACCOUNTD_REQUEST_DEADLINE_SECONDS": "3",
            ])
        ).database.pool
        #expect(
            tuned
                == PoolSettings(
                    maximumConnections: 8, minimumConnections: 2, keepAliveSeconds: 45, waitSeconds: 3, lockTimeoutSeconds: 5,
                    statementTimeoutSeconds: 10))
        // Only a maximum: the minimum follows it.
        let small = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_DB_MAX_CONNECTIONS": "5"]))
        #expect(small.database.pool.minimumConnections == 5)

        #expect {
            try Configuration(
                ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_DB_MAX_CONNECTIONS": "4", "ACCOUNTD_DB_MIN_CONNECTIONS": "9"]))
        } throws: { error in
            (error as? ConfigurationError)?.description.contains("ACCOUNTD_DB_MIN_CONNECTIONS must be a whole number from 0 to 4") == true
        }
        #expect(throws: ConfigurationError.self) {
            try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_DB_MAX_CONNECTIONS": "0"]))
        }
    }

    @Test(
        "production defaults: enumeration protection and abuse limits on, the log transport only when chosen (and then loudly); demo- the other way"
    )
    func productionDefaults() throws {
        let production = [
            "ACCOUNTD_PROJECT_ID": "acme-prod", "ACCOUNTD_API_KEYS": "k1", "ACCOUNTD_ADMIN_TOKENS": "ops:s3cret-7Hq2vX9pL4mZ8wR0a",
            "ACCOUNTD_KEY_ENCRYPTION_KEY": String(repeating: "ab", count: 32),
        ]
        func configuration(_ extra: [String: String]) throws -> Configuration {
            try Configuration(ConfigurationInput().merged(withEnvironment: production.merging(extra) { $1 }))
        }
        do {
            _ = try configuration([:])
            Issue.record("a production project started without choosing a mail transport")
        } catch let error as ConfigurationError {
            #expect(error.problems.contains { $0.hasPrefix("ACCOUNTD_MAIL_TRANSPORT is not set") })
        }
        let smtp = try configuration(["ACCOUNTD_MAIL_TRANSPORT": "smtp", "ACCOUNTD_PUBLIC_URL": ""])
        #expect(smtp.listen.publicURL == nil, "compose passes an unset variable as an empty string")
        #expect(smtp.accounts.emailEnumerationProtection && smtp.projectSettings.emailEnumerationProtection)
        #expect(smtp.abuseLimits.enabled && smtp.warnings.isEmpty)
        let log = try configuration(["ACCOUNTD_MAIL_TRANSPORT": "log"])
        #expect(log.warnings.count == 1 && log.warnings[0].contains("live sign-in"))
        #expect(
            try !configuration(["ACCOUNTD_MAIL_TRANSPORT": "smtp", "ACCOUNTD_EMAIL_ENUMERATION_PROTECTION": "off"])
                .accounts.emailEnumerationProtection)

        let demo = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "demo-x"]))
        #expect(!demo.accounts.emailEnumerationProtection && !demo.abuseLimits.enabled && demo.warnings.isEmpty)
        let protectedDemo = try Configuration(
            ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "demo-x", "ACCOUNTD_EMAIL_ENUMERATION_PROTECTION": "on"]))
        #expect(protectedDemo.accounts.emailEnumerationProtection)
    }

    @Test(
        "P16, A.7: SMS transports: none by default for a real project, log for demo-; the webhook needs its URL and secret; the test inbox only for demo-"
    )
    func smsSettings() throws {
        func configuration(_ extra: [String: String]) throws -> Configuration {
            try Configuration(ConfigurationInput().merged(withEnvironment: Self.production.merging(extra) { $1 }))
        }
        // Every refusal of a real project ends with the reminder that only demo- projects run on defaults.
        func problems(_ extra: [String: String]) -> [String] { Array(Self.problems(Self.production.merging(extra) { $1 }).dropLast()) }
        let defaults = try configuration([:])
        #expect(defaults.phone.transport == .none && !defaults.phone.testInbox && defaults.phone.codeLifetimeSeconds == 600)
        #expect(problems(["ACCOUNTD_TEST_SMS_INBOX": "1"]).contains { $0.hasPrefix("ACCOUNTD_TEST_SMS_INBOX lists live SMS codes") })
        #expect(problems(["ACCOUNTD_SMS_TRANSPORT": "webhook"]).count == 2, "the URL and the secret are both named")
        #expect(
            problems([
                "ACCOUNTD_SMS_TRANSPORT": "webhook", "ACCOUNTD_SMS_WEBHOOK_URL": "https://sms.example.com/hook",
                "ACCOUNTD_SMS_WEBHOOK_SECRET": "short",
            ])
                == ["ACCOUNTD_SMS_WEBHOOK_SECRET must be at least 16 characters"])
        #expect(problems(["ACCOUNTD_SMS_TRANSPORT": "carrier-pigeon"]) == ["ACCOUNTD_SMS_TRANSPORT must be none, log or webhook"])
        #expect(!problems(["ACCOUNTD_SMS_CODE_TTL": "30"]).isEmpty)
        let log = try configuration(["ACCOUNTD_SMS_TRANSPORT": "log"])
        #expect(log.warnings.contains { $0.contains("SMS codes are written to the log") })
        let demo = try Configuration(
            ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "demo-x", "ACCOUNTD_TEST_SMS_INBOX": "1"]))
        #expect(demo.phone.transport == .log && demo.phone.testInbox)
    }

    /// A real project's complete environment.
    static let production = [
        "ACCOUNTD_PROJECT_ID": "acme-prod", "ACCOUNTD_API_KEYS": "k1", "ACCOUNTD_ADMIN_TOKENS": "ops:s3cret-7Hq2vX9pL4mZ8wR0a",
        "ACCOUNTD_KEY_ENCRYPTION_KEY": String(repeating: "ab", count: 32), "ACCOUNTD_MAIL_TRANSPORT": "smtp",
    ]

    /// What the server refuses to start with, for `environment` (none when it starts).
    static func problems(_ environment: [String: String]) -> [String] {
        do {
            _ = try Configuration(ConfigurationInput().merged(withEnvironment: environment))
            return []
        } catch let error as ConfigurationError {
            return error.problems
        } catch {
            return ["\(error)"]
        }
    }

    @Test(
        "the admin listener: loopback 9098 by default; the well-known token owner refused outside loopback for a real project unless allowed, then loudly; a port of its own"
    )
    func adminListener() throws {
        func configuration(_ extra: [String: String]) throws -> Configuration {
            try Configuration(ConfigurationInput().merged(withEnvironment: Self.production.merging(extra) { $1 }))
        }
        func problems(_ extra: [String: String]) -> [String] { Self.problems(Self.production.merging(extra) { $1 }) }
        let defaults = try configuration([:])
        #expect(defaults.listen.adminHost == "127.0.0.1" && defaults.listen.adminPort == 9098 && defaults.publicListener == .publicOnly)
        #expect(try Configuration(ConfigurationInput().merged(withEnvironment: [:])).publicListener == .combined)

        // owner on loopback is the Admin SDK's emulator mode on one machine: allowed.
        for host in ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"] {
            #expect(
                try configuration(["ACCOUNTD_ADMIN_TOKENS": "owner:owner", "ACCOUNTD_ADMIN_HOST": host]).warnings.isEmpty, "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.5", "admin.internal"] {
            let refused = problems(["ACCOUNTD_ADMIN_TOKENS": "ops:s3cret-7Hq2vX9pL4mZ8wR0a,owner", "ACCOUNTD_ADMIN_HOST": host])
            #expect(refused.contains { $0.contains("well-known token \"owner\"") }, "\(host): \(refused)")
            let allowed = try configuration([
                "ACCOUNTD_ADMIN_TOKENS": "owner:owner", "ACCOUNTD_ADMIN_HOST": host, "ACCOUNTD_ALLOW_WELL_KNOWN_ADMIN_TOKEN": "1",
            ])
            #expect(allowed.warnings.count == 1 && allowed.warnings[0].contains("owner"))
        }
        // A secret token may listen anywhere; a demo project keeps its owner anywhere.
        #expect(try configuration(["ACCOUNTD_ADMIN_HOST": "0.0.0.0"]).warnings.isEmpty)
        #expect(
            try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_ADMIN_HOST": "0.0.0.0"])).access.adminTokens["owner"]
                == "owner")

        #expect(
            problems(["ACCOUNTD_PORT": "9200", "ACCOUNTD_ADMIN_PORT": "9200"]).contains { $0.hasPrefix("ACCOUNTD_ADMIN_PORT must differ") })
        #expect(problems(["ACCOUNTD_ADMIN_PORT": "70000"]).contains { $0.hasPrefix("ACCOUNTD_ADMIN_PORT must be a port") })
        // The project number: digits, the project id when unset.
        #expect(defaults.projectSettings.projectNumber == "acme-prod")
        #expect(try configuration(["ACCOUNTD_PROJECT_NUMBER": "123456789012"]).projectSettings.projectNumber == "123456789012")
        #expect(problems(["ACCOUNTD_PROJECT_NUMBER": "12ab"]).contains { $0.hasPrefix("ACCOUNTD_PROJECT_NUMBER") })
        var input = ConfigurationInput()
        input.adminHost = "10.1.2.3"
        input.adminPort = "7000"
        let options = try Configuration(input.merged(withEnvironment: Self.production.merging(["ACCOUNTD_ADMIN_PORT": "7001"]) { $1 }))
        #expect(options.listen.adminHost == "10.1.2.3" && options.listen.adminPort == 7000, "options win over the environment")
    }

    @Test(
        "second review: a real project's admin tokens carry 128 bits; a wildcard listener needs a public URL; URLs are URLs; demo- allows anonymous sign-up"
    )
    func secondReview() throws {
        let production = Self.production
        func problems(_ extra: [String: String], base: [String: String] = production) -> [String] {
            Self.problems(base.merging(extra) { $1 })
        }
        // Tokens: 32 hex digits (128 bits) and 22 base64 characters (132) pass; shorter, or one repeated character, do not.
        for token in ["5f3c9a17e2b84d06a1c7f93e28b5d40c", "Qm9vdHN0cmFwLXNlY3JldA", "correct horse battery staple twice over"] {
            #expect(problems(["ACCOUNTD_ADMIN_TOKENS": "ops:\(token)"]).isEmpty, "\(token)")
        }
        for token in [
            "s3cret", "0123456789abcdef0123456789abcde", "Qm9vdHN0cmFwLXNlY3Jld", String(repeating: "a", count: 200),
            "adminadminadminadminad", "changeme-changeme-changeme-changeme", "abcdefghijabcdefghijabcdefghij",
        ] {
            let refused = problems(["ACCOUNTD_ADMIN_TOKENS": "ops:\(token)"])
            #expect(refused.contains { $0.hasPrefix("ACCOUNTD_ADMIN_TOKENS entry ops carries about") }, "\(token): \(refused)")
            #expect(!refused.joined().contains(token), "the refusal never prints the token")
        }
        #expect(problems(["ACCOUNTD_ADMIN_TOKENS": "ops:s3cret"], base: ["ACCOUNTD_PROJECT_ID": "demo-x"]).isEmpty, "demo projects choose")
        // A trusted proxy that holds every address lets any client name itself: said at every start.
        for everything in ["0.0.0.0/0", "::/0", "::ffff:0:0/96"] {
            let warned = try Configuration(
                ConfigurationInput().merged(withEnvironment: production.merging(["ACCOUNTD_TRUSTED_PROXIES": everything]) { $1 }))
            #expect(warned.warnings.contains { $0.hasPrefix("ACCOUNTD_TRUSTED_PROXIES entry \(everything) holds every address") })
        }

        // A wildcard listener: email links would point at no address.
        for host in ["0.0.0.0", "::", "[::]"] {
            #expect(problems(["ACCOUNTD_HOST": host]).contains { $0.hasPrefix("ACCOUNTD_HOST \(host) listens on every interface") })
            #expect(problems(["ACCOUNTD_HOST": host, "ACCOUNTD_PUBLIC_URL": "https://auth.example.com"]).isEmpty)
            let demo = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_HOST": host, "ACCOUNTD_PORT": "9200"]))
            #expect(demo.projectSettings.actionHandlerURL == "http://127.0.0.1:9200/__/auth/action", "demo projects use loopback")
        }
        let ipv6 = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_HOST": "::1", "ACCOUNTD_PORT": "9200"]))
        #expect(ipv6.projectSettings.actionHandlerURL == "http://[::1]:9200/__/auth/action")
        #expect(ActionCodeSettings.httpHost(ipv6.projectSettings.actionHandlerURL) != nil)
        for (name, value) in [("ACCOUNTD_PUBLIC_URL", "auth.example.com"), ("ACCOUNTD_ACTION_HANDLER_URL", "ftp://x/y")] {
            #expect(problems([name: value]).contains { $0.hasPrefix("\(name) \"\(value)\" is not an absolute http(s) URL") })
        }

        // Anonymous sign-up: the emulator's default for demo- projects, explicit for real ones.
        let demo = try Configuration(ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "demo-x"]))
        #expect(demo.accounts.allowAnonymous && demo.projectSettings.allowAnonymous)
        #expect(
            try !Configuration(
                ConfigurationInput().merged(withEnvironment: ["ACCOUNTD_PROJECT_ID": "demo-x", "ACCOUNTD_ALLOW_ANONYMOUS": "off"])
            ).accounts.allowAnonymous)
        #expect(try !Configuration(ConfigurationInput().merged(withEnvironment: production)).accounts.allowAnonymous)
        #expect(problems(["ACCOUNTD_ALLOW_ANONYMOUS": "maybe"]).contains { $0 == "ACCOUNTD_ALLOW_ANONYMOUS must be on or off" })
    }
}
