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
import HummingbirdCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// Composes the server from a configuration whose database is known: the PostgreSQL client, the
/// migration gate, the adapters behind the domain's ports, the routes, the background services.
/// `accountd serve` and the tests call this same function.
func buildApplication(
    _ configuration: Configuration,
    databaseURL: DatabaseURL,
    logger: Logger,
    clock: any WallClock = SystemClock(),
    onAdminListening: @escaping @Sendable (Int) async -> Void = { _ in },
    onStartupFailure: @escaping @Sendable (any Error) async -> Void = { _ in },
    onRoutes: @Sendable (APIRoutes) -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let postgres = try Database(url: databaseURL, pool: configuration.databasePool, logger: logger)
    let migrations = try Migration.load(from: URL(fileURLWithPath: configuration.migrationsDirectory))
    let migrator = Migrator(migrations: migrations, database: postgres, logger: logger)

    let sealer = KeySealer(keyEncryptionKey: configuration.keyEncryptionKey)
    let keyRing = RS256KeyRing(
        store: PostgresSigningKeyStore(database: postgres, logger: logger), sealer: sealer, now: { clock.now() },
        verifiedTokenCapacity: configuration.verifiedTokenCacheEntries)
    let refreshKeyID = "k" + sealer.kekID.prefix(8)
    let refreshCodec = HMACRefreshTokenCodec(
        masterKeys: [refreshKeyID: sealer.derive(info: "accountd refresh-token master v1", count: 32)],
        currentKeyID: refreshKeyID, acceptsVersion1: configuration.acceptVersion1RefreshTokens ?? true
    )
    // Suspended until the revocation listener hears the channel.
    let cache = RevocationCache(suspended: true)
    let store = PostgresAccountStore(database: postgres, logger: logger, revocations: cache)
    let limiter = AbuseLimiter(
        settings: configuration.abuseLimits, store: PostgresAbuseLimitStore(database: postgres, logger: logger),
        keyer: HMACLimitKeyer(key: sealer.derive(info: "accountd limits v1", count: 32)), clock: clock)
    let service = AccountService(
        settings: configuration.projectSettings,
        store: store,
        hasher: Argon2idHasher(parameters: configuration.passwordHashParameters, queueLimit: configuration.hashQueueLimit),
        signer: keyRing,
        refreshCodec: refreshCodec,
        cache: cache,
        clock: clock,
        limiter: limiter
    )

    // The routes both listeners serve; the public one adds the action page (and keeps the token
    // route, which the admin listener refuses).
    var routes = APIRoutes()
    routes.addHealth(readiness: PostgresReadinessProbe(migrator: migrator, database: postgres))
    routes.addKeys(signer: keyRing)
    routes.addClientSurface(settings: configuration.projectSettings, signer: keyRing)
    routes.addAccounts(service: service)
    let actionCodes = ActionCodeService(accounts: service, store: store)
    routes.addActionCodes(service: actionCodes, access: configuration.accessPolicy)
    let idpConfigs = IdPConfigCache(
        base: PostgresIdPConfigStore(database: postgres, logger: logger, sealer: sealer, project: configuration.projectID),
        suspended: true)
    routes.addIdPConfigs(service: IdPConfigService(store: idpConfigs, settings: configuration.projectSettings, clock: clock))
    let idpClient = IssuerDirectory.makeClient(trustedCAFile: configuration.idpCAFile)
    let signers = CustomTokenSignerCache(base: store, suspended: true)
    let issuers = IssuerDirectory(
        client: idpClient, clock: clock, allowLoopbackHTTP: configuration.isDemoProject,
        fetchTimeout: .seconds(configuration.idpFetchTimeoutSeconds), logger: logger)
    routes.addCustomTokens(
        service: CustomTokenService(
            accounts: service, signers: signers, crypto: RSACustomTokenCrypto(), documents: issuers,
            acceptUnsigned: configuration.acceptUnsignedCustomTokens))
    let federationCrypto = RSACustomTokenCrypto()
    routes.addFederation(
        service: FederatedSignInService(
            accounts: service, configs: idpConfigs, store: store, verifier: issuers, endpoints: issuers,
            sha256: { federationCrypto.sha256($0) },
            flowKey: { [flowKey = SymmetricKey(data: sealer.derive(info: "accountd idp flow v1", count: 32))] message in
                Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: flowKey))
            },
            insecureTestMode: configuration.acceptUnverifiedIdPTokens))
    let admin = AdminService(accounts: service, store: store, keys: keyRing)
    routes.addAdmin(service: admin)
    routes.addImport(service: admin, store: store)
    let adminRoutes = routes
    try routes.addActionHandler(
        service: actionCodes, access: configuration.accessPolicy,
        csrfKey: sealer.derive(info: "accountd action-page csrf v1", count: 32), logoURL: configuration.productLogoURL,
        templatesDirectory: configuration.actionTemplatesDirectory)
    // The public listener's routes, for whoever composes a server to inspect (the suite walks them).
    onRoutes(routes)

    // One count of refused admin tokens for both listeners (a demo project serves admins on both).
    let tokenGuard = AdminTokenGuard(limiter: limiter)
    let gate = StartupGate()
    var services: [any Service] = [
        HTTPClientService(client: idpClient),
        postgres,
        RevocationListener(
            database: postgres, cache: cache, targets: [.providerConfigs: idpConfigs.cache, .signers: signers.cache], logger: logger),
        GatedService(gate: gate, inner: KeyPromotionService(keyRing: keyRing, logger: logger)),
        GatedService(
            gate: gate,
            inner: ExpiredRowSweeper(
                database: postgres, logger: logger, failureReset: configuration.abuseLimits.lockout.resetSeconds)),
    ]
    if configuration.deliversEmail {
        // After the client, so it stops first on shutdown; after the migration, so its table exists.
        let transport = try MailConfiguration.makeTransport(from: configuration.mailEnvironment, logger: logger)
        services.append(GatedService(gate: gate, inner: OutboxWorker(database: postgres, transport: transport, logger: logger)))
    }

    // The admin listener runs as one of the public application's services: it opens with the
    // startup gate (the schema current, a signing key in place), as the public server does, and
    // stops with the application.
    let adminListener = Application(
        responder: APIResponder(
            routes: adminRoutes, access: configuration.accessPolicy, listener: .admin,
            deadline: .seconds(configuration.databasePool.waitSeconds), tokenGuard: tokenGuard),
        server: server(configuration),
        configuration: .init(address: .hostname(configuration.adminHost, port: configuration.adminPort), serverName: "accountd"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.adminPort
            logger.notice("admin listener", metadata: ["address": "\(configuration.adminHost):\(port)"])
            await onAdminListening(port)
        },
        logger: logger
    )
    services.append(GatedService(gate: gate, inner: adminListener))

    var app = Application(
        responder: APIResponder(
            routes: routes, access: configuration.accessPolicy, listener: configuration.publicListener,
            deadline: .seconds(configuration.databasePool.waitSeconds), tokenGuard: tokenGuard),
        server: server(configuration),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "accountd"),
        services: services,
        logger: logger
    )
    app.beforeServerStarts {
        // Start-up waits for the database on its own budget, not a request's deadline: under load,
        // or while PostgreSQL restarts, a connection can take longer than a request may wait.
        do {
            try await RequestScope.$current.withValue(RequestScope(budget: .seconds(configuration.startupDatabaseWaitSeconds))) {
                if configuration.migrateOnStart {
                    let applied = try await migrator.migrate()
                    if !applied.isEmpty { logger.notice("migrated", metadata: ["applied": "\(applied.joined(separator: ", "))"]) }
                } else {
                    try await migrator.requireCurrent()
                }
                try await keyRing.ensureCurrentKey()
                try await warnOfProvidersTrustingAnyDomain(idpConfigs, logger: logger)
                if configuration.acceptVersion1RefreshTokens == nil {
                    refreshCodec.versionOne.set(try await store.hasVersionOneRefreshTokens())
                    if refreshCodec.acceptsVersion1 {
                        logger.notice(
                            "live sessions still hold first-format refresh tokens: accepted until they refresh (ACCOUNTD_REFRESH_ACCEPT_V1=auto re-checks at every start; off refuses them)"
                        )
                    }
                }
            }
        } catch {
            await onStartupFailure(error)
            throw error
        }
        await gate.openGate()
    }
    return app
}

/// Logs a warning for every identity provider the operator set to prove any domain's addresses
/// (`trustedEmailDomains: ["*"]`, federation-and-limits.md decision 11): such a provider takes over
/// every unverified account whose address it asserts, and links to every verified one.
func warnOfProvidersTrustingAnyDomain(_ configs: any IdPConfigStore, logger: Logger) async throws {
    for defaultSupported in [false, true] {
        var after: String?
        while true {
            let page = try await configs.idpConfigs(defaultSupported: defaultSupported, after: after, limit: 100)
            for config in page where config.options.trustedEmailDomains?.contains("*") == true {
                logger.warning(
                    "identity provider trusts every email domain: its verified emails take over accounts with the same address",
                    metadata: ["provider": "\(config.providerID)", "enabled": "\(config.enabled)"])
            }
            guard page.count == 100, let last = page.last else { break }
            after = last.providerID
        }
    }
}

/// Shuts an HTTP client down when the application stops (AsyncHTTPClient requires it).
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}

/// One listener's HTTP/1 server: the request timeout (``RequestDeadlineHandler``) and idle timeout.
private func server(_ configuration: Configuration) -> HTTPServerBuilder {
    .http1(
        configuration: .init(
            additionalChannelHandlers: [RequestDeadlineHandler(deadline: .seconds(configuration.httpRequestTimeoutSeconds))],
            idleTimeout: .seconds(configuration.httpIdleTimeoutSeconds)
        )
    )
}
