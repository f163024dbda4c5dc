import AccountCore
import Foundation
import Synchronization
import Testing

/// §B.4: each replica caches provider configs, drops them on invalidation, expires them after the
/// TTL, and serves nothing from memory while its invalidation feed is down.
@Suite("Provider config cache")
struct IdPConfigCacheTests {
    /// An in-memory store that counts reads; `onRead` runs inside a read, before it returns.
    final class CountingStore: IdPConfigStore {
        let state = Mutex<(configs: [String: IdPConfig], reads: Int)>(([:], 0))
        let onRead = Mutex<(@Sendable () -> Void)?>(nil)

        var reads: Int { state.withLock { $0.reads } }

        func idpConfig(_ providerID: String) async throws -> IdPConfig? {
            let config = state.withLock { state in
                state.reads += 1
                return state.configs[providerID]
            }
            onRead.withLock { $0 }?()
            return config
        }
        func idpConfigs(defaultSupported: Bool, after: String?, limit: Int) async throws -> [IdPConfig] { [] }
        func createIdPConfig(_ config: IdPConfig) async throws { state.withLock { $0.configs[config.providerID] = config } }
        func updateIdPConfig(_ config: IdPConfig) async throws { state.withLock { $0.configs[config.providerID] = config } }
        func deleteIdPConfig(_ providerID: String) async throws -> Bool {
            state.withLock { $0.configs.removeValue(forKey: providerID) != nil }
        }
    }

    static func config(enabled: Bool) -> IdPConfig {
        IdPConfig(
            providerID: "oidc.a", enabled: enabled, clientID: "client", issuer: "https://issuer.example",
            createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
    }

    /// A clock the test moves.
    final class Uptime: Sendable {
        let start = ContinuousClock.now
        let offset = Mutex(Duration.zero)
        func now() -> ContinuousClock.Instant { start + offset.withLock { $0 } }
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
    }

    @Test("served from memory after one read, absent configs included; a write through it, or an invalidation, drops the entry")
    func servesAndInvalidates() async throws {
        let store = CountingStore()
        let cache = IdPConfigCache(base: store)
        #expect(try await cache.idpConfig("oidc.a") == nil)
        #expect(try await cache.idpConfig("oidc.a") == nil)
        #expect(store.reads == 1)
        try await cache.createIdPConfig(Self.config(enabled: true))
        #expect(try await cache.idpConfig("oidc.a")?.enabled == true)
        #expect(try await cache.idpConfig("oidc.a")?.enabled == true)
        #expect(store.reads == 2)
        // Another replica's write: the store changes under the cache, which serves the old entry until told.
        try await store.updateIdPConfig(Self.config(enabled: false))
        #expect(try await cache.idpConfig("oidc.a")?.enabled == true)
        cache.cache.invalidate("oidc.a")
        #expect(try await cache.idpConfig("oidc.a")?.enabled == false)
        #expect(try await cache.deleteIdPConfig("oidc.a"))
        #expect(try await cache.idpConfig("oidc.a") == nil)
        #expect(store.reads == 4)
    }

    @Test("a read that raced an invalidation is returned but not stored")
    func fillRacingAnInvalidation() async throws {
        let store = CountingStore()
        try await store.createIdPConfig(Self.config(enabled: true))
        let cache = IdPConfigCache(base: store)
        store.onRead.withLock { $0 = { cache.cache.invalidate("oidc.a") } }  // the NOTIFY arrives mid-read
        #expect(try await cache.idpConfig("oidc.a")?.enabled == true)
        store.onRead.withLock { $0 = nil }
        try await store.updateIdPConfig(Self.config(enabled: false))
        #expect(try await cache.idpConfig("oidc.a")?.enabled == false)
        #expect(store.reads == 2)
    }

    @Test("entries expire after the TTL")
    func expiry() async throws {
        let store = CountingStore()
        let uptime = Uptime()
        let cache = IdPConfigCache(base: store, ttl: .seconds(60), now: { uptime.now() })
        _ = try await cache.idpConfig("oidc.a")
        uptime.advance(.seconds(59))
        _ = try await cache.idpConfig("oidc.a")
        #expect(store.reads == 1)
        uptime.advance(.seconds(1))
        _ = try await cache.idpConfig("oidc.a")
        #expect(store.reads == 2)
    }

    @Test("NotifiedCache: invalidateAll forgets every key; a full cache starts over rather than grow")
    func invalidateAllAndCapacity() async throws {
        let cache = NotifiedCache<Int>(ttl: .seconds(60), capacity: 2, suspended: false)
        let fills = Mutex(0)
        func read(_ key: String) async throws -> Int {
            try await cache.value(key) {
                fills.withLock {
                    $0 += 1; return $0
                }
            }
        }
        #expect(try await read("a") == 1)
        #expect(try await read("b") == 2)
        #expect(try await read("a") == 1)
        cache.invalidateAll()
        #expect(try await read("a") == 3)
        #expect(try await read("b") == 4)
        #expect(try await read("c") == 5)  // the third key: the two held are dropped
        #expect(try await read("a") == 6)
        #expect(try await read("c") == 5)
    }

    @Test("suspended (no feed yet, or the feed lost), every read goes to the store; resumed, it caches again")
    func suspension() async throws {
        let store = CountingStore()
        let cache = IdPConfigCache(base: store, suspended: true)
        _ = try await cache.idpConfig("oidc.a")
        _ = try await cache.idpConfig("oidc.a")
        #expect(store.reads == 2)
        cache.cache.resume()
        _ = try await cache.idpConfig("oidc.a")
        _ = try await cache.idpConfig("oidc.a")
        #expect(store.reads == 3)
        cache.cache.suspend()
        _ = try await cache.idpConfig("oidc.a")
        #expect(store.reads == 4)
    }
}
