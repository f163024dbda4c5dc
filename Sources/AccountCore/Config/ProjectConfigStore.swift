/// Where the project configuration resource is kept (mfa-phone-tenants.md §0.4). A save notifies
/// every replica, whose caches then read it again.
package protocol ProjectConfigStore: Sendable {
    /// The stored document of `tenant` (`""` = the project), or nil when none was ever saved.
    func projectConfig(tenant: String) async throws -> JSONValue?
    /// Replaces the stored document of `tenant`, and announces the change.
    func saveProjectConfig(_ document: JSONValue, tenant: String) async throws
}
