/// Each replica's cache of custom-token signers by service account (federation-and-limits.md
/// §C.2, "cache + NOTIFY as B.4"), in front of the store: a custom-token sign-in reads its issuer's
/// keys from memory. Writes through it drop the entries they touch; other replicas' writes arrive
/// on the revocation channel (`k:<email>`); 60 s TTL as the net. It serves from memory only while
/// its feed is up (``NotifiedCache``).
package final class CustomTokenSignerCache: CustomTokenSignerStore {
    private let base: any CustomTokenSignerStore
    /// The entries, by service-account email; the revocation listener drives it.
    package let cache: NotifiedCache<[CustomTokenSigner]>

    /// Caches `base`'s signers for `ttl`; `suspended` until its feed resumes it.
    package init(base: any CustomTokenSignerStore, ttl: Duration = .seconds(60), suspended: Bool = false) {
        self.base = base
        self.cache = NotifiedCache(ttl: ttl, suspended: suspended)
    }

    package func signers(email: String) async throws -> [CustomTokenSigner] {
        try await cache.value(email) { try await base.signers(email: email) }
    }

    package func signers(project: String) async throws -> [CustomTokenSigner] {
        try await base.signers(project: project)
    }

    package func addSigners(_ signers: [CustomTokenSigner]) async throws {
        defer { for signer in signers { cache.invalidate(signer.email) } }
        try await base.addSigners(signers)
    }

    package func removeSigner(project: String, signerID: String) async throws -> Bool {
        // The email is the store's to know: forget them all (a rare admin act).
        defer { cache.invalidateAll() }
        return try await base.removeSigner(project: project, signerID: signerID)
    }
}
