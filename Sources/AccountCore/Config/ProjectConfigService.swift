/// The project configuration resource (mfa-phone-tenants.md §0.4): read on hot paths from each
/// replica's cache, changed by the admin's PATCH, held on every replica within the notification's
/// delay (the cache is told by `NOTIFY`, and serves nothing from memory while its feed is down).
package struct ProjectConfigService: Sendable {
    private let store: any ProjectConfigStore
    /// The entries; the revocation listener drives it.
    package let cache: NotifiedCache<ProjectConfigDocument>
    /// Whether SMS can be sent (a transport other than `none`, or a `demo-` project): phone sign-in
    /// cannot be turned on without it (§A.2).
    private let canSendSMS: Bool

    package init(store: any ProjectConfigStore, canSendSMS: Bool, ttl: Duration = .seconds(60), suspended: Bool = false) {
        self.store = store
        self.canSendSMS = canSendSMS
        self.cache = NotifiedCache(ttl: ttl, capacity: 64, suspended: suspended)
    }

    /// The project's current document (from memory while fresh).
    package func current(tenant: String = "") async throws -> ProjectConfigDocument {
        try await cache.value(tenant) { try await Self.read(store, tenant: tenant) }
    }

    /// Applies a PATCH (§0.4) and returns the new document.
    package func patch(_ body: [String: JSONValue], mask: [String]?, tenant: String = "") async throws -> ProjectConfigDocument {
        let now = try await Self.read(store, tenant: tenant)
        let next = try now.patched(with: body, mask: mask)
        if next.phone.enabled && !canSendSMS {
            throw AccountError(.invalidConfig, "phone sign-in needs an SMS transport (ACCOUNTD_SMS_TRANSPORT).")
        }
        defer { cache.invalidate(tenant) }
        try await store.saveProjectConfig(next.stored, tenant: tenant)
        return next
    }

    /// The stored document; one that no longer reads (a later version's members) is an error, not
    /// a silently empty configuration.
    private static func read(_ store: any ProjectConfigStore, tenant: String) async throws -> ProjectConfigDocument {
        try ProjectConfigDocument(stored: try await store.projectConfig(tenant: tenant) ?? .object([:]))
    }
}
