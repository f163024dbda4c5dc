import AccountCrypto
import Logging
import ServiceLifecycle

/// Promotes a published `next` signing key to `current` once verifiers have had time to fetch it
/// (identity-toolkit.md §3.6). Every replica runs it; the store makes the promotion happen once.
struct KeyPromotionService: Service {
    let keyRing: RS256KeyRing
    let logger: Logger
    var interval: Duration = .seconds(60)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            // Sleep first: at start-up the schema may still be migrating.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            do {
                try await keyRing.promoteWhenDue()
            } catch {
                logger.warning("signing key promotion failed; retrying", metadata: ["error": "\(error)"])
            }
        }
    }
}
