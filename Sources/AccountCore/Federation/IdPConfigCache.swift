/// Each replica's cache of provider configurations (federation-and-limits.md §B.4), in front of
/// the store: a federated sign-in reads its provider's config from memory, not one SELECT and a
/// JSON decode a request. Writes go through it and drop the entry at once; other replicas' writes
/// arrive as invalidations on the revocation channel (`c:<providerId>`), and entries expire after
/// 60 s as the safety net. Absent configs are cached too, so an unknown provider costs no query
/// either. It serves from memory only while its feed is up (``NotifiedCache``).
package final class IdPConfigCache: IdPConfigStore {
    private let base: any IdPConfigStore
    /// The entries; the revocation listener drives it.
    package let cache: NotifiedCache<IdPConfig?>

    /// Caches `base`'s configs for `ttl`; `suspended` until its feed resumes it. `now` is
    /// injectable for tests of the expiry.
    package init(
        base: any IdPConfigStore, ttl: Duration = .seconds(60), suspended: Bool = false,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.base = base
        self.cache = NotifiedCache(ttl: ttl, suspended: suspended, now: now)
    }

    package func idpConfig(_ providerID: String) async throws -> IdPConfig? {
        try await cache.value(providerID) { try await base.idpConfig(providerID) }
    }

    package func idpConfigs(defaultSupported: Bool, after: String?, limit: Int) async throws -> [IdPConfig] {
        try await base.idpConfigs(defaultSupported: defaultSupported, after: after, limit: limit)
    }

    package func createIdPConfig(_ config: IdPConfig) async throws {
        defer { cache.invalidate(config.providerID) }
        try await base.createIdPConfig(config)
    }

    package func updateIdPConfig(_ config: IdPConfig) async throws {
        defer { cache.invalidate(config.providerID) }
        try await base.updateIdPConfig(config)
    }

    package func deleteIdPConfig(_ providerID: String) async throws -> Bool {
        defer { cache.invalidate(providerID) }
        return try await base.deleteIdPConfig(providerID)
    }
}
