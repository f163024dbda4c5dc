package import AccountCore
import Foundation
package import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps this replica's ``RevocationCache`` (and the ``NotifiedCache``s of provider configs and
/// custom-token signers) honest: listens on the revocation channel over a dedicated connection and
/// drops what other replicas (and this one) revoke or reconfigure.
///
/// The cache serves only while the listener listens: until the first `LISTEN` and from the moment
/// the connection is lost until it listens again, the cache is suspended (every check reads the
/// database), so a revocation made while this replica heard nothing is never answered from the
/// cache. The listener reconnects with back-off (100 ms doubling to 5 s) and logs one line when it
/// loses the channel and one when it has it back.
package struct RevocationListener: Service {
    private let database: ConnectionPool
    private let cache: RevocationCache
    private let targets: [Invalidation.Cache: any InvalidationTarget]
    private let logger: Logger

    /// Creates the listener; `targets` are the other caches by their payloads' prefix (`c` for
    /// provider configs, `k` for custom-token signers: `c:<key>`).
    package init(
        database: ConnectionPool, cache: RevocationCache, targets: [Invalidation.Cache: any InvalidationTarget] = [:], logger: Logger
    ) {
        self.database = database
        self.cache = cache
        self.targets = targets
        self.logger = logger
    }

    package func run() async throws {
        var backoff = Duration.milliseconds(100)
        var lostAt: ContinuousClock.Instant?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let connection = try await database.connectDedicated(logger: logger)
                // Closed on every path: a connection dropped unclosed trips PostgresNIO's deinit
                // assertion (a crash in debug builds) when shutdown interrupts the listen.
                do {
                    try await listen(on: connection) {
                        backoff = .milliseconds(100)
                        if let since = lostAt {
                            logger.notice(
                                "revocation listener listening again",
                                metadata: ["down_ms": "\((ContinuousClock.now - since).milliseconds)"])
                            lostAt = nil
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                cache.suspend()
                targets.values.forEach { $0.suspend() }
                if lostAt == nil {
                    lostAt = .now
                    logger.warning(
                        "revocation listener lost its connection; the cache is off until it listens again",
                        metadata: ["error": "\(String(describing: error).prefix(200))"])
                }
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    private func listen(on connection: PostgresConnection, listening: () -> Void) async throws {
        try await connection.listen(on: PostgresAccountStore.revocationChannel) { [cache, targets] notifications in
            // Anything revoked while we were not listening is unknown: start clean, then serve.
            cache.resume()
            targets.values.forEach { $0.resume() }
            listening()
            try await cancelWhenGracefulShutdown {
                for try await notification in notifications {
                    switch Invalidation(payload: notification.payload) {
                    case .user(let localID)?: cache.invalidate(user: localID)
                    case .session(let sessionID)?: cache.invalidate(session: sessionID)
                    case .providerConfig(let providerID)?: targets[.providerConfigs]?.invalidate(providerID)
                    case .signers(let email)?: targets[.signers]?.invalidate(email)
                    case .projectConfig(let tenant)?: targets[.projectConfig]?.invalidate(tenant)
                    case nil: break
                    }
                }
            }
        }
    }
}

extension Duration {
    /// Whole milliseconds, for logs.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
