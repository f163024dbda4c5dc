import Foundation
import Synchronization

/// Each replica's cache of provider configurations (federation-and-limits.md §B.4), in front of
/// the store: a federated sign-in reads its provider's config from memory, not one SELECT and a
/// JSON decode a request. Writes go through it and drop the entry at once; other replicas' writes
/// arrive as invalidations on the revocation channel (`c:<providerId>`), and entries expire after
/// `ttl` (60 s) as the safety net. Absent configs are cached too, so an unknown provider costs no
/// query either.
///
/// Like ``RevocationCache``, it serves only while its invalidation feed is up: until the listener
/// first listens, and whenever it loses its connection, every read goes to the store. A read that
/// raced an invalidation is not stored.
package final class IdPConfigCache: IdPConfigStore {
    private struct Entry {
        var config: IdPConfig?
        var storedAt: ContinuousClock.Instant
    }

    private struct Contents {
        var entries: [String: Entry] = [:]
        /// Counts invalidations; a fill remembers it when it starts.
        var epoch: UInt64 = 0
        var suspended: Bool
    }

    private let base: any IdPConfigStore
    private let ttl: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let contents: Mutex<Contents>

    /// Caches `base`'s configs for `ttl`; `suspended` until its feed calls ``resume()``. `now` is
    /// injectable for tests of the expiry.
    package init(
        base: any IdPConfigStore, ttl: Duration = .seconds(60), suspended: Bool = false,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.base = base
        self.ttl = ttl
        self.now = now
        self.contents = Mutex(Contents(suspended: suspended))
    }

    package func idpConfig(_ providerID: String) async throws -> IdPConfig? {
        let start = now()
        let cached: Entry?? = contents.withLock { contents in
            guard !contents.suspended, let entry = contents.entries[providerID], start - entry.storedAt < ttl else { return nil }
            return .some(entry)
        }
        if let cached { return cached?.config }
        let epoch = contents.withLock { $0.epoch }
        let config = try await base.idpConfig(providerID)
        contents.withLock { contents in
            guard !contents.suspended, contents.epoch == epoch else { return }
            contents.entries[providerID] = Entry(config: config, storedAt: start)
        }
        return config
    }

    package func idpConfigs(defaultSupported: Bool, after: String?, limit: Int) async throws -> [IdPConfig] {
        try await base.idpConfigs(defaultSupported: defaultSupported, after: after, limit: limit)
    }

    package func createIdPConfig(_ config: IdPConfig) async throws {
        defer { invalidate(config.providerID) }
        try await base.createIdPConfig(config)
    }

    package func updateIdPConfig(_ config: IdPConfig) async throws {
        defer { invalidate(config.providerID) }
        try await base.updateIdPConfig(config)
    }

    package func deleteIdPConfig(_ providerID: String) async throws -> Bool {
        defer { invalidate(providerID) }
        return try await base.deleteIdPConfig(providerID)
    }

    /// Forgets one provider's config (a write here or on another replica).
    package func invalidate(_ providerID: String) {
        contents.withLock { contents in
            contents.epoch &+= 1
            contents.entries.removeValue(forKey: providerID)
        }
    }

    /// Forgets everything and serves nothing from memory until ``resume()``: the feed is lost.
    package func suspend() {
        contents.withLock { $0 = Contents(epoch: $0.epoch &+ 1, suspended: true) }
    }

    /// Starts caching again, empty: the feed is back, and what changed meanwhile is unknown.
    package func resume() {
        contents.withLock { $0 = Contents(epoch: $0.epoch &+ 1, suspended: false) }
    }
}
