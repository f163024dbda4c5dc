package import AccountCore
import Foundation
package import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

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
    private let telemetry: Telemetry
    /// How often the listener times the channel (``probe(_:)``).
    private let probeInterval: Duration

    /// Creates the listener; `targets` are the other caches by their payloads' prefix (`c` for
    /// provider configs, `k` for custom-token signers: `c:<key>`).
    package init(
        database: ConnectionPool, cache: RevocationCache, targets: [Invalidation.Cache: any InvalidationTarget] = [:], logger: Logger,
        telemetry: Telemetry = .off, probeInterval: Duration = .seconds(10)
    ) {
        self.telemetry = telemetry
        self.probeInterval = probeInterval
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
                telemetry.set(.revocationListenerUp, [], 0)
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
        try await connection.listen(on: PostgresAccountStore.revocationChannel) { [cache, targets, telemetry] notifications in
            // Anything revoked while we were not listening is unknown: start clean, then serve.
            cache.resume()
            targets.values.forEach { $0.resume() }
            telemetry.set(.revocationListenerUp, [], 1)
            listening()
            let probes = ProbeClock()
            let prober = telemetry.isOff ? nil : Task { await probe(probes) }
            defer { prober?.cancel() }
            try await cancelWhenGracefulShutdown {
                for try await notification in notifications {
                    if let sent = probes.heard(notification.payload) {
                        telemetry.record(.revocationLag, [], ContinuousClock.now - sent)
                        continue
                    }
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

extension RevocationListener {
    /// Times the channel from a commit on a pooled connection to this listener hearing it
    /// (``MetricFamily/revocationLag``): every ``probeInterval`` a `h:<nonce>` notification, which
    /// other replicas, and versions that do not know the prefix, ignore.
    private func probe(_ probes: ProbeClock) async {
        while !Task.isCancelled {
            let payload = probes.next()
            _ = try? await database.withConnection { connection in
                try await connection.query(
                    "SELECT pg_notify(\(PostgresAccountStore.revocationChannel), \(payload))", logger: logger)
            }
            try? await Task.sleep(for: probeInterval)
        }
    }
}

/// The probes in flight: each payload and when it was sent, kept until heard (the latest few).
final class ProbeClock: Sendable {
    private let nonce = Hex.encode(SystemRandom().bytes(8))
    private let sent = Mutex<(sequence: Int, instants: [String: ContinuousClock.Instant])>((0, [:]))

    /// A new probe's payload, sent now.
    func next() -> String {
        sent.withLock { state in
            state.sequence += 1
            let payload = "h:\(nonce).\(state.sequence)"
            if state.instants.count > 16 { state.instants.removeAll() }
            state.instants[payload] = .now
            return payload
        }
    }

    /// When `payload` was sent, if it is one of this listener's probes (nil otherwise); a probe
    /// of another replica is not an invalidation either: it is dropped by the caller's switch.
    func heard(_ payload: String) -> ContinuousClock.Instant? {
        guard payload.hasPrefix("h:") else { return nil }
        return sent.withLock { $0.instants.removeValue(forKey: payload) }
    }
}

extension Duration {
    /// Whole milliseconds, for logs.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
