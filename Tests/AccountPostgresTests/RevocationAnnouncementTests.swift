import AccountCore
import AccountTesting
import Foundation
import Testing

@testable import AccountPostgres

@Suite("Revocations announced by the store")
struct RevocationAnnouncementTests {
    /// No listener runs here: only the store itself can clear this replica's cache, as it must
    /// when the call that revoked ends (issue 21: one place announces every revocation).
    @Test("a revocation clears this replica's cache when the store call ends, for that user only")
    func storeClearsItsReplicasCache() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let cache = RevocationCache(ttl: .seconds(3600))  // no expiry during the test, however slow
            let store = PostgresAccountStore(database: client, logger: TestDatabase.logger, revocations: cache)
            let now = Date()
            for localID in ["alice", "bob"] {
                _ = try await store.createUser(
                    UserRecord(localID: localID, createdAt: now, validSince: 0, tokensValidAfter: now), session: nil, now: now)
                cache.store(
                    SessionState(localID: localID, sessionLive: true, userExists: true, userDisabled: false, validSince: 0),
                    forSession: "session-of-\(localID)", since: cache.beginFill())
            }
            #expect(cache.state(forSession: "session-of-alice") != nil)
            _ = try await store.revokeSessions(localID: "alice", sessionIDs: nil, reason: .allSessionsRevoked, now: now)
            #expect(cache.state(forSession: "session-of-alice") == nil)
            #expect(cache.state(forSession: "session-of-bob") != nil)
            try await store.delete(localID: "bob", guardSession: nil, now: now)
            #expect(cache.state(forSession: "session-of-bob") == nil)
        }
    }
}
