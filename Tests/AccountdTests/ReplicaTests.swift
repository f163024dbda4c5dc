import AccountTesting
import Foundation
import NIOHTTP1
import Testing

@testable import accountd

/// Two accountd instances on one database, as replicas behind a load balancer.
@Suite("Two replicas on one database")
struct ReplicaTests {
    @Test("a revocation on one replica is seen by the other's warm cache within a second; both sign with one key")
    func revocationCrossesReplicas() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { httpA in
            try await withServer(database: database) { httpB in
                let a = API(http: httpA)
                let b = API(http: httpB)
                let jwksA = try await httpA.get("/.well-known/jwks.json").json["keys"] as? [[String: Any]]
                let jwksB = try await httpB.get("/.well-known/jwks.json").json["keys"] as? [[String: Any]]
                #expect(jwksA?.count == 1)
                #expect(jwksA?.first?["kid"] as? String == jwksB?.first?["kid"] as? String)

                let s1 = try await a.signUp("alice@example.com")
                let s2 = try await a.signIn("alice@example.com")
                // Warm B's cache for both sessions.
                for session in [s1, s2] {
                    #expect(try await b.admin("verifyIdToken", ["idToken": session.idToken, "checkRevoked": true]).status == 200)
                }
                // One session revoked on A.
                let sid1 = try #require(s1.claims["sid"] as? String)
                #expect(try await a.admin("revokeSessions", ["localId": s1.localID, "sessionIds": [sid1]]).status == 200)
                let seenIn = try await Self.timeUntil(limit: .seconds(1)) {
                    try await b.admin("verifyIdToken", ["idToken": s1.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED"
                }
                #expect(seenIn != nil, "replica B still accepted a revoked session after 1 s")
                #expect(try await b.admin("verifyIdToken", ["idToken": s2.idToken, "checkRevoked": true]).status == 200)

                // All of the user's sessions revoked on B; A sees it.
                #expect(try await b.admin("update", ["localId": s1.localID, "validSince": "0"]).status == 200)
                let allSeenIn = try await Self.timeUntil(limit: .seconds(1)) {
                    try await a.client("lookup", ["idToken": s2.idToken]).errorCode == "TOKEN_EXPIRED"
                }
                #expect(allSeenIn != nil, "replica A still accepted a revoked user's token after 1 s")
                #expect(try await a.refresh(s2.refreshToken).errorCode == "TOKEN_EXPIRED")
            }
        }
    }

    @Test("a custom-token signer removed on one replica stops verifying on the other, whose cache held it")
    func signerRemovalCrossesReplicas() async throws {
        let database = try await TestDatabase.createMigrated()
        let clock = ManualClock()
        let account = try ServiceAccount("replicated")
        try await withServer(database: database, clock: clock) { httpA in
            try await withServer(database: database, clock: clock) { httpB in
                let path = "/v1/projects/demo-test/customTokenSigners"
                let added = try await httpA.admin.post(
                    path, ["serviceAccountEmail": account.email, "publicKeyPem": account.publicKeyPEM], headers: [API.admin])
                let signerID = try #require(added.string("signerId"))
                // B reads (and caches) the signer: tokens sign in there.
                let b = API(http: httpB)
                #expect(try await CustomTokenTests.exchange(b, try account.token(uid: "r1", issuedAt: clock.now())).status == 200)
                #expect(try await CustomTokenTests.exchange(b, try account.token(uid: "r2", issuedAt: clock.now())).status == 200)
                let removed = try await httpA.admin.send(.DELETE, path + "/" + signerID, headers: [API.admin])
                #expect(removed.status == 200)
                let refusedAfter = try await Self.timeUntil(limit: .seconds(10)) {
                    try await CustomTokenTests.exchange(b, try account.token(uid: "r3", issuedAt: clock.now())).errorCode
                        == "INVALID_CUSTOM_TOKEN"
                }
                #expect(refusedAfter != nil, "replica B still trusted a removed signer")
            }
        }
    }

    @Test("phone sign-in turned on through one replica's configuration resource is on at the other, whose cache held it off")
    func projectConfigCrossesReplicas() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(PhoneSignInTests.demoConfiguration(), database: database) { httpA in
            try await withServer(PhoneSignInTests.demoConfiguration(), database: database) { httpB in
                let b = API(http: httpB)
                #expect(try await b.client("sendVerificationCode", ["phoneNumber": "+15555550100"]).errorCode == "OPERATION_NOT_ALLOWED")
                try await PhoneSignInTests.enablePhone(httpA)
                // Far inside the cache's 60 s lifetime: only the notification can have told B.
                let seenIn = try await Self.timeUntil(limit: .seconds(10)) {
                    try await b.client("sendVerificationCode", ["phoneNumber": "+15555550100"]).status == 200
                }
                #expect(seenIn != nil, "replica B still refused phone sign-in 10 s after A turned it on")
            }
        }
    }

    /// Polls `condition` until it holds or `limit` passes; returns how long it took.
    static func timeUntil(limit: Duration, _ condition: () async throws -> Bool) async throws -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if try await condition() { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
