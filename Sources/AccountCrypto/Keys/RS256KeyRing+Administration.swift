package import AccountCore
package import Foundation

extension RS256KeyRing: KeyAdministration {
    /// How long a retired key stays published: the longest token it signed (a 14-day session
    /// cookie) plus five minutes of clock skew.
    package static let retiredLifetime: TimeInterval = 14 * 86400 + 300

    /// How long a new key is published before it signs: the key routes' cache lifetime.
    package static let publishBeforeSigning: TimeInterval = 3600

    package func keySummaries() async throws -> [SigningKeySummary] {
        try await store.publishedKeys(at: now()).map {
            SigningKeySummary(
                kid: $0.kid, state: $0.state.rawValue, createdAt: $0.createdAt, activatedAt: $0.activatedAt, retiredAt: $0.retiredAt,
                removeAfter: $0.removeAfter
            )
        }
    }

    package func rotate(immediately: Bool) async throws -> String {
        if immediately { return try await rotateNow(retiredLifetime: Self.retiredLifetime) }
        return try await addNextKey()
    }

    /// Promotes a `next` key once it has been published long enough (run periodically).
    package func promoteWhenDue() async throws {
        try await promoteDueKeys(publishedFor: Self.publishBeforeSigning, retiredLifetime: Self.retiredLifetime)
    }
}
