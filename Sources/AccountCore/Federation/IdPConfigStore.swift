import Foundation

/// The configured providers; the PostgreSQL adapter implements it (secrets sealed there).
package protocol IdPConfigStore: Sendable {
    /// One config by provider id.
    func idpConfig(_ providerID: String) async throws -> IdPConfig?
    /// A page of configs of one collection (`oidc.` ids, or the default-supported ones), by id after `after`.
    func idpConfigs(defaultSupported: Bool, after: String?, limit: Int) async throws -> [IdPConfig]
    /// Creates; `CONFIGURATION_EXISTS` when the id exists.
    func createIdPConfig(_ config: IdPConfig) async throws
    /// Replaces; `CONFIGURATION_NOT_FOUND` when the id does not exist.
    func updateIdPConfig(_ config: IdPConfig) async throws
    /// Deletes (links stay); false when there was none.
    func deleteIdPConfig(_ providerID: String) async throws -> Bool
}
