import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Testing

@testable import accountd

/// `ACCOUNTD_DATABASE_READ_URL` (issue 37, reads): the admin listings that tolerate a replica's lag
/// read there, everything else reads the primary. The "replica" here is a second database the test
/// controls, so which one a call read is visible in its answer.
@Suite("Read replica for admin listings")
struct ReadReplicaTests {
    @Test("batchGet, downloadAccount and query read the replica; lookup, sign-in and refresh never do")
    func listingsReadTheReplica() async throws {
        let primary = try await TestDatabase.createMigrated()
        let replica = try await TestDatabase.createMigrated()
        var configuration = productionConfiguration()
        configuration.database.readURL = replica
        // One account only the replica has (as a replica would, had it been written on the primary).
        try await withServer(productionConfiguration(), database: replica) { http in
            _ = try await API(http: http, project: "acme-prod").signUp("only-on-replica@example.com")
        }
        try await withServer(configuration, database: primary) { http in
            let api = API(http: http, project: "acme-prod")
            let alice = try await api.signUp("alice@example.com")
            // The listings see the replica: its account, not the primary's.
            let page = try await http.admin.get("/v1/projects/acme-prod/accounts:batchGet?maxResults=10", headers: [API.admin])
            #expect(page.status == 200)
            let listed = (page.json["users"] as? [[String: Any]] ?? []).compactMap { $0["email"] as? String }
            #expect(listed == ["only-on-replica@example.com"], "\(listed)")
            let queried = try await http.admin.post("/v1/projects/acme-prod/accounts:query", ["returnUserInfo": true], headers: [API.admin])
            #expect(queried.string("recordsCount") == "1")
            let legacy = try await http.admin.post(
                "/identitytoolkit/v3/relyingparty/downloadAccount", ["targetProjectId": "acme-prod", "maxResults": 10], headers: [API.admin]
            )
            #expect((legacy.json["users"] as? [[String: Any]])?.compactMap { $0["email"] as? String } == ["only-on-replica@example.com"])
            // What decides anything reads the primary.
            #expect((try await api.admin("lookup", ["localId": [alice.localID]]).json["users"] as? [Any])?.count == 1)
            #expect(try await api.admin("lookup", ["email": ["only-on-replica@example.com"]]).json["users"] == nil)
            #expect(try await api.signIn("alice@example.com").idToken.isEmpty == false)
            #expect(try await api.refresh(alice.refreshToken).status == 200)
        }
    }

    @Test("a replica that does not answer fails its listings with 503, and nothing else")
    func unreachableReplica() async throws {
        var configuration = productionConfiguration()
        configuration.database.readURL = try DatabaseURL("postgres://postgres@127.0.0.1:\(try RunningServer.freePort())/accountd")
        configuration.database.pool.waitSeconds = 1
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http, project: "acme-prod")
            let alice = try await api.signUp("alice@example.com")
            let page = try await http.admin.get("/v1/projects/acme-prod/accounts:batchGet?maxResults=10", headers: [API.admin])
            #expect(page.status == 503)
            #expect(page.header("Retry-After") != nil)
            #expect(try await api.admin("lookup", ["localId": [alice.localID]]).status == 200)
            #expect(try await http.get("/readyz").status == 200)
        }
    }
}
