import Foundation

/// The custom-token signers and the used tokens; the PostgreSQL adapter implements it.
package protocol CustomTokenSignerStore: Sendable {
    /// Every key registered for `email`, in any project this database serves.
    func signers(email: String) async throws -> [CustomTokenSigner]
    /// The keys of `project`, oldest first.
    func signers(project: String) async throws -> [CustomTokenSigner]
    /// Registers `signers` (one per key of a registration) in one transaction; `CONFIGURATION_EXISTS`
    /// when the project already has one of the keys.
    func addSigners(_ signers: [CustomTokenSigner]) async throws
    /// Removes a signer of `project`; false when there is none with that id.
    func removeSigner(project: String, signerID: String) async throws -> Bool
}
