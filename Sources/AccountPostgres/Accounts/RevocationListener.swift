public import AccountCore
import Foundation
public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Keeps this replica's ``RevocationCache`` honest: listens on the revocation channel over a
/// dedicated connection and drops what other replicas (and this one) revoke. A lost connection
/// clears the cache and reconnects with back-off; the cache's TTL covers the gap.
package struct RevocationListener: Service {
    private let url: DatabaseURL
    private let cache: RevocationCache
    private let logger: Logger

    /// Creates the listener.
    package init(url: DatabaseURL, cache: RevocationCache, logger: Logger) {
        self.url = url
        self.cache = cache
        self.logger = logger
    }

    package func run() async throws {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: .init(
                        host: url.host, port: url.port, username: url.username, password: url.password, database: url.database,
                        tls: url.requireTLS ? .require(try .init(configuration: .makeClientConfiguration())) : .disable
                    ),
                    id: 0,
                    logger: logger
                )
                backoff = .milliseconds(100)
                // Closed on every path: a connection dropped unclosed trips PostgresNIO's deinit
                // assertion (a crash in debug builds) when shutdown interrupts the listen.
                do {
                    try await listen(on: connection)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                cache.clear()
                logger.warning("revocation listener lost its connection; reconnecting", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    private func listen(on connection: PostgresConnection) async throws {
        try await cancelWhenGracefulShutdown {
            let notifications = try await connection.listen(PostgresAccountStore.revocationChannel)
            // Anything revoked while we were not listening is unknown: start clean.
            cache.clear()
            for try await notification in notifications {
                let payload = notification.payload
                if payload.hasPrefix("u:") {
                    cache.invalidate(user: String(payload.dropFirst(2)))
                } else if payload.hasPrefix("s:") {
                    cache.invalidate(session: String(payload.dropFirst(2)))
                }
            }
        }
    }
}
