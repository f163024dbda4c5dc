import AccountAPI
import AccountCore
import AccountCrypto
import AccountIdP
import AccountMail
import AccountPostgres
import AsyncHTTPClient
import CoreMetrics
import Crypto
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// Composes the server from a configuration whose database is known, as the Hummingbird
/// template does: the parts (``Components``), their routes (``Components/routes(_:)``), the
/// background services and listeners, and what start-up checks before the gate opens.
/// `accountd serve` and the tests call this same function.
func buildApplication(
    _ configuration: Configuration,
    databaseURL: DatabaseURL,
    logger: Logger,
    clock: any WallClock = SystemClock(),
    onAdminListening: @escaping @Sendable (Int) async -> Void = { _ in },
    onStartupFailure: @escaping @Sendable (any Error) async -> Void = { _ in },
    onRoutes: @Sendable (APIRoutes) -> Void = { _ in },
    extraServices: [any Service] = []
) async throws -> some ApplicationProtocol {
    let metrics = configuration.metricsEnabled ? MetricsEndpoint() : nil
    let telemetry = metrics?.telemetry ?? .off
    let parts = try Components(configuration, databaseURL: databaseURL, logger: logger, clock: clock, telemetry: telemetry)
    var routes = try parts.routes(configuration)
    if let metrics { routes.admin.fixed["/metrics"] = metrics.route(parts) }
    // Each listener's OpenAPI document, of the routes it serves: added last, so it lists them all.
    routes.public.addOpenAPI(listener: configuration.publicListener, version: MetricsEndpoint.version, projectID: configuration.projectID)
    routes.admin.addOpenAPI(listener: .admin, version: MetricsEndpoint.version, projectID: configuration.projectID)
    // The public listener's routes, for whoever composes a server to inspect (the suite walks them).
    onRoutes(routes.public)

    let gate = StartupGate()
    // One count of refused admin tokens for both listeners (a demo project serves admins on both).
    let tokenGuard = AdminTokenGuard(limiter: parts.limiter)
    // The trace exporter first: it starts before and stops after everything that makes spans.
    var services = extraServices + (try parts.backgroundServices(configuration, gate: gate))
    // The admin listener runs as one of the public application's services: it opens with the
    // startup gate (the schema current, a signing key in place), as the public server does, and
    // stops with the application.
    let adminListener = Application(
        responder: APIResponder(
            routes: routes.admin, access: configuration.accessPolicy, listener: .admin,
            deadline: .seconds(configuration.database.pool.waitSeconds), tokenGuard: tokenGuard, telemetry: telemetry),
        server: server(configuration, telemetry: telemetry),
        configuration: .init(
            address: .hostname(configuration.listen.adminHost, port: configuration.listen.adminPort), serverName: "accountd"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.listen.adminPort
            logger.notice("admin listener", metadata: ["address": "\(configuration.listen.adminHost):\(port)"])
            await onAdminListening(port)
        },
        logger: logger
    )
    services.append(GatedService(gate: gate, inner: adminListener))

    var app = Application(
        responder: APIResponder(
            routes: routes.public, access: configuration.accessPolicy, listener: configuration.publicListener,
            deadline: .seconds(configuration.database.pool.waitSeconds), tokenGuard: tokenGuard, telemetry: telemetry),
        server: server(configuration, telemetry: telemetry),
        configuration: .init(address: .hostname(configuration.listen.host, port: configuration.listen.port), serverName: "accountd"),
        services: services,
        logger: logger
    )
    app.beforeServerStarts {
        do {
            try await parts.start(configuration)
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
private func server(_ configuration: Configuration, telemetry: Telemetry) -> HTTPServerBuilder {
    let timeouts = Counter(
        label: MetricFamily.httpTimeouts.rawValue, dimensions: [("kind", "http_timeout")], factory: telemetry.factory)
    return .http1(
        configuration: .init(
            additionalChannelHandlers: [
                RequestDeadlineHandler(deadline: .seconds(configuration.listen.requestTimeoutSeconds), timeouts: timeouts)
            ],
            idleTimeout: .seconds(configuration.listen.idleTimeoutSeconds)
        )
    )
}
