import AccountAPI
import AccountCore
import AccountCrypto
import AccountIdP
import AccountMail
import AccountPostgres
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// The server's parts, made once from the configuration: the PostgreSQL pool and the migration
/// gate, the adapters behind the domain's ports, and the domain's services over them. The
/// composition root (``buildApplication(_:databaseURL:logger:clock:onAdminListening:onStartupFailure:onRoutes:)``)
/// wires them into routes, background services and listeners.
struct Components: Sendable {
    let logger: Logger
    let postgres: ConnectionPool
    let migrator: Migrator
    let sealer: KeySealer
    let keyRing: RS256KeyRing
    let refreshCodec: HMACRefreshTokenCodec
    /// Suspended until the revocation listener hears the channel.
    let revocations: RevocationCache
    let store: PostgresAccountStore
    let limiter: AbuseLimiter
    let environment: ServiceEnvironment
    let accounts: AccountService
    let actionCodes: ActionCodeService
    let idpConfigs: IdPConfigCache
    let signers: CustomTokenSignerCache
    let idpClient: HTTPClient
    let issuers: IssuerDirectory
    let customTokens: CustomTokenService
    let federation: FederatedSignInService
    let admin: AdminService
    let projectConfigs: ProjectConfigService
    let phone: PhoneSignInService
    let mfa: MFAService
    let hasher: Argon2idHasher
    /// The read replica's pool (``Configuration/DatabaseSettings/readURL``), opened on demand.
    let replica: ConnectionPool?
    /// The pool of the connections that need a session of their own (the revocation listener, the
    /// migrations): ``Configuration/DatabaseSettings/sessionURL``'s, or the main one.
    let sessions: ConnectionPool
    /// Where every part reports its figures (``MetricsEndpoint``).
    let telemetry: Telemetry

    init(_ configuration: Configuration, databaseURL: DatabaseURL, logger: Logger, clock: any WallClock, telemetry: Telemetry = .off) throws
    {
        self.logger = logger
        self.telemetry = telemetry
        postgres = try ConnectionPool(url: databaseURL, pool: configuration.database.pool, logger: logger, telemetry: telemetry)
        // Two connections at most (the migrations', or the listener's probe), beside the listener's own.
        sessions =
            try configuration.database.sessionURL.map { try Self.poolBeside(configuration, url: $0, maximum: 2, logger: logger) }
            ?? postgres
        migrator = Migrator(
            migrations: try Migration.load(from: URL(fileURLWithPath: configuration.database.migrationsDirectory)), database: sessions,
            logger: logger)
        sealer = KeySealer(keyEncryptionKey: configuration.keys.keyEncryptionKey)
        keyRing = RS256KeyRing(
            store: PostgresSigningKeyStore(database: postgres, logger: logger), sealer: sealer, now: { clock.now() },
            verifiedTokenCapacity: configuration.keys.verifiedTokenCacheEntries, telemetry: telemetry)
        let refreshKeyID = "k" + sealer.kekID.prefix(8)
        refreshCodec = HMACRefreshTokenCodec(
            masterKeys: [refreshKeyID: sealer.derive(info: "accountd refresh-token master v1", count: 32)],
            currentKeyID: refreshKeyID, acceptsVersion1: configuration.keys.acceptVersion1RefreshTokens ?? true)
        revocations = RevocationCache(suspended: true)
        store = PostgresAccountStore(database: postgres, logger: logger, revocations: revocations, telemetry: telemetry)
        limiter = AbuseLimiter(
            settings: configuration.abuseLimits, store: PostgresAbuseLimitStore(database: postgres, logger: logger),
            keyer: HMACLimitKeyer(key: sealer.derive(info: "accountd limits v1", count: 32)), clock: clock, telemetry: telemetry)
        let projectConfigs = ProjectConfigService(
            store: PostgresProjectConfigStore(database: postgres, logger: logger),
            canSendSMS: configuration.phone.transport != .none || configuration.isDemoProject, suspended: true)
        self.projectConfigs = projectConfigs
        let environment = ServiceEnvironment(
            settings: configuration.projectSettings, clock: clock, limiter: limiter, configs: projectConfigs, telemetry: telemetry)
        self.environment = environment
        let hasher = Argon2idHasher(
            parameters: configuration.accounts.passwordHashParameters, queueLimit: configuration.accounts.hashQueueLimit,
            telemetry: telemetry)
        self.hasher = hasher
        let phoneSecrets = HMACPhoneSecrets(key: sealer.derive(info: "accountd phone codes", count: 32))
        accounts = AccountService(
            environment: environment,
            store: store,
            hasher: hasher,
            signer: keyRing,
            refreshCodec: refreshCodec,
            cache: revocations,
            gate: SecondFactorGate(store: store, configs: projectConfigs, secrets: phoneSecrets, environment: environment)
        )
        actionCodes = ActionCodeService(accounts: accounts, environment: environment, store: store, users: store, hasher: hasher)
        idpConfigs = IdPConfigCache(
            base: PostgresIdPConfigStore(database: postgres, logger: logger, sealer: sealer, project: configuration.projectID),
            suspended: true)
        idpClient = IssuerDirectory.makeClient(trustedCAFile: configuration.federation.caFile)
        signers = CustomTokenSignerCache(base: store, suspended: true)
        issuers = IssuerDirectory(
            client: idpClient, clock: clock, allowLoopbackHTTP: configuration.isDemoProject,
            fetchTimeout: .seconds(configuration.federation.fetchTimeoutSeconds), logger: logger, telemetry: telemetry)
        customTokens = CustomTokenService(
            accounts: accounts, environment: environment, users: store, signers: signers, crypto: RSACustomTokenCrypto(),
            documents: issuers,
            acceptUnsigned: configuration.federation.acceptUnsignedCustomTokens)
        let federationCrypto = RSACustomTokenCrypto()
        federation = FederatedSignInService(
            accounts: accounts, environment: environment, users: store, configs: idpConfigs, store: store, verifier: issuers,
            endpoints: issuers,
            sha256: { federationCrypto.sha256($0) },
            flowKey: { [flowKey = SymmetricKey(data: sealer.derive(info: "accountd idp flow v1", count: 32))] message in
                Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: flowKey))
            },
            insecureTestMode: configuration.federation.acceptUnverifiedIdPTokens)
        replica = try configuration.database.readURL.map { try Self.poolBeside(configuration, url: $0, logger: logger) }
        admin = AdminService(
            accounts: accounts, environment: environment, store: store, users: store, keys: keyRing, signer: keyRing, hasher: hasher,
            listings: replica.map { PostgresAccountStore(database: $0, logger: logger) })
        phone = PhoneSignInService(
            accounts: accounts, environment: environment, store: store, users: store, configs: projectConfigs,
            secrets: phoneSecrets, sealer: sealer,
            options: PhoneSignInService.Options(
                codeLifetime: TimeInterval(configuration.phone.codeLifetimeSeconds),
                appName: configuration.phone.appName ?? ActionCodeSettings.httpHost(configuration.projectSettings.actionHandlerURL)
                    ?? configuration.projectSettings.productName,
                testInbox: configuration.phone.testInbox))
        mfa = MFAService(
            accounts: accounts, environment: environment, store: store, phone: phone, secrets: phoneSecrets, sealer: sealer,
            hotp: HMACSHA1HOTP())
    }

    /// A pool beside the main one (the read replica's, the session URL's): it opens nothing until
    /// asked (a server down at start delays no one) and reports no figures, which would be taken
    /// for the main pool's.
    private static func poolBeside(_ configuration: Configuration, url: DatabaseURL, maximum: Int? = nil, logger: Logger) throws
        -> ConnectionPool
    {
        var pool = configuration.database.pool
        pool.minimumConnections = 0
        if let maximum { pool.maximumConnections = maximum }
        return try ConnectionPool(url: url, pool: pool, logger: logger)
    }

    /// The SMS transport the configuration chose; nil for `none`.
    private func smsTransport(_ configuration: Configuration) -> (any SMSTransport)? {
        switch configuration.phone.transport {
        case .none: nil
        case .log: LogSMSTransport(logger: logger)
        case .webhook:
            WebhookSMSTransport(
                url: configuration.phone.webhookURL ?? "", secret: configuration.phone.webhookSecret ?? "", clock: environment.clock)
        }
    }

    /// The routes of both listeners: the admin one serves every RPC (and refuses the token
    /// route); the public one adds the email action page.
    func routes(_ configuration: Configuration) throws -> (public: APIRoutes, admin: APIRoutes) {
        var routes = APIRoutes()
        routes.addHealth(readiness: PostgresReadinessProbe(migrator: migrator, database: postgres))
        routes.addKeys(signer: keyRing)
        routes.addClientSurface(environment: environment, signer: keyRing)
        routes.addAccounts(service: accounts)
        routes.addActionCodes(service: actionCodes, access: configuration.accessPolicy)
        routes.addIdPConfigs(
            service: IdPConfigService(store: idpConfigs, settings: configuration.projectSettings, clock: environment.clock))
        routes.addCustomTokens(service: customTokens)
        routes.addFederation(service: federation)
        routes.addAdmin(service: admin)
        routes.addImport(service: admin, store: store)
        routes.addPhone(service: phone, testInbox: configuration.phone.testInbox)
        routes.addMFA(service: mfa, access: configuration.accessPolicy)
        routes.addProjectConfig(service: projectConfigs, settings: configuration.projectSettings)
        let admin = routes
        try routes.addActionHandler(
            service: actionCodes, access: configuration.accessPolicy,
            csrfKey: sealer.derive(info: "accountd action-page csrf v1", count: 32), logoURL: configuration.email.productLogoURL,
            templatesDirectory: configuration.email.actionTemplatesDirectory)
        return (routes, admin)
    }

    /// What runs beside the listeners: the HTTP client's and the pool's lifetimes, the revocation
    /// listener, and, once the start-up gate opens, key promotion, the sweeper and the mail outbox.
    func backgroundServices(_ configuration: Configuration, gate: StartupGate) throws -> [any Service] {
        // Each pool before what uses it: the group stops services in reverse order.
        var services: [any Service] = [HTTPClientService(client: idpClient), postgres]
        if sessions !== postgres { services.append(sessions) }
        services += [
            RevocationListener(
                database: sessions, cache: revocations,
                targets: [.providerConfigs: idpConfigs.cache, .signers: signers.cache, .projectConfig: projectConfigs.cache],
                logger: logger, telemetry: telemetry),
            GatedService(gate: gate, inner: KeyPromotionService(keyRing: keyRing, logger: logger)),
            GatedService(
                gate: gate,
                inner: ExpiredRowSweeper(
                    database: postgres, logger: logger, failureReset: configuration.abuseLimits.lockout.resetSeconds)),
        ]
        if let replica { services.append(replica) }
        if configuration.email.delivers {
            // After the client, so it stops first on shutdown; after the migration, so its table exists.
            let transport = try MailConfiguration.makeTransport(from: configuration.email.transportEnvironment, logger: logger)
            let mailLabel = configuration.email.transportEnvironment["ACCOUNTD_MAIL_TRANSPORT"]?.lowercased() ?? "log"
            services.append(
                GatedService(
                    gate: gate,
                    inner: OutboxWorker(
                        database: postgres, transport: transport, logger: logger, telemetry: telemetry,
                        transportLabel: ["smtp", "webhook", "log"].contains(mailLabel) ? mailLabel : "log")))
            if let sms = smsTransport(configuration) {
                services.append(
                    GatedService(
                        gate: gate,
                        inner: OutboxWorker(
                            database: postgres, queue: PostgresSMSOutbox(transport: sms, sealer: sealer), logger: logger,
                            // Retried until the code dies (mayRetry), not for a count of attempts (§A.7).
                            maxAttempts: .max, maxBackoff: .seconds(60), telemetry: telemetry,
                            labels: ("sms", configuration.phone.transport == .webhook ? "webhook" : "log"))))
            }
        }
        return services
    }

    /// What start-up does before the gate opens: the schema migrated or current, a signing key in
    /// place, warnings about providers that trust every domain, the first-format refresh tokens'
    /// fate decided. It waits for the database on its own budget, not a request's deadline: under
    /// load, or while PostgreSQL restarts, a connection can take longer than a request may wait.
    func start(_ configuration: Configuration) async throws {
        try await RequestScope.$current.withValue(RequestScope(budget: .seconds(configuration.database.startupWaitSeconds))) {
            if configuration.database.migrateOnStart {
                let applied = try await migrator.migrate()
                if !applied.isEmpty { logger.notice("migrated", metadata: ["applied": "\(applied.joined(separator: ", "))"]) }
            } else {
                try await migrator.requireCurrent()
            }
            try await keyRing.ensureCurrentKey()
            try await warnOfProvidersTrustingAnyDomain(idpConfigs, logger: logger)
            // ACCOUNTD_AUTHORIZED_DOMAINS seeds the resource's list at the first start only (Corrections 11).
            if try await projectConfigs.current().authorizedDomains == nil {
                do {
                    _ = try await projectConfigs.patch(
                        ["authorizedDomains": .array(configuration.projectSettings.authorizedDomains.map(JSONValue.string))],
                        mask: ["authorizedDomains"])
                } catch let error as AccountError where error.code == .invalidAuthorizedDomain {
                    // The environment's list keeps applying; the resource cannot hold it as it is.
                    logger.warning(
                        "ACCOUNTD_AUTHORIZED_DOMAINS could not seed the configuration resource; it applies until an admin sets authorizedDomains",
                        metadata: ["reason": "\(error.detail ?? "")"])
                }
            }
            // Phone sign-in turned on through the configuration resource needs a way to send its codes.
            if try await projectConfigs.current().phone.enabled, configuration.phone.transport == .none, !configuration.isDemoProject {
                throw StartupRefusal(
                    description:
                        "phone sign-in is enabled in the project configuration but ACCOUNTD_SMS_TRANSPORT is none: set it to webhook (or turn phone sign-in off)"
                )
            }
            if configuration.keys.acceptVersion1RefreshTokens == nil {
                refreshCodec.versionOne.set(try await store.hasVersionOneRefreshTokens())
                if refreshCodec.acceptsVersion1 {
                    logger.notice(
                        "live sessions still hold first-format refresh tokens: accepted until they refresh (ACCOUNTD_REFRESH_ACCEPT_V1=auto re-checks at every start; off refuses them)"
                    )
                }
            }
        }
    }
}

/// A start-up check that failed: the server does not serve.
struct StartupRefusal: Error, CustomStringConvertible {
    var description: String
}
