package import Foundation

/// Signing keys as operators see them.
package struct SigningKeySummary: Sendable, Equatable {
    package var kid: String
    package var state: String
    package var createdAt: Date
    package var activatedAt: Date?
    package var retiredAt: Date?
    package var removeAfter: Date?

    /// Creates a summary.
    package init(kid: String, state: String, createdAt: Date, activatedAt: Date?, retiredAt: Date?, removeAfter: Date?) {
        self.kid = kid
        self.state = state
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
        self.removeAfter = removeAfter
    }
}

/// Listing and rotating signing keys (identity-toolkit.md §3.6).
package protocol KeyAdministration: Sendable {
    /// Every published key.
    func keySummaries() async throws -> [SigningKeySummary]
    /// Publishes a new key; with `immediately` it also signs at once (emergency: verifiers that
    /// cached the key list may reject new tokens until they refetch).
    func rotate(immediately: Bool) async throws -> String
}
