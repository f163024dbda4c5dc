import AccountTesting
import Foundation
import NIOHTTP1
import Testing

@testable import accountd

/// The admin plane (issue 22): a real project's admins use a listener of their own, bound to
/// loopback by default; its public listener serves apps only. A `demo-` project keeps the Firebase
/// emulator's one host for everything.
@Suite("The admin listener")
struct AdminPlaneTests {
    static let lookup = "/v1/projects/acme-prod/accounts:lookup"

    @Test("a real project: the public listener refuses every bearer alike and project-scoped routes; the admin listener serves the admin")
    func productionSplit() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http, project: "acme-prod")
            #expect(http.adminPort != nil && http.adminPort != http.port)
            let alice = try await api.signUp("alice@example.com")

            // The public listener: the configured admin token and a guessed one get the same answer,
            // so the public port is no oracle for admin tokens.
            let valid = try await http.post(Self.lookup, ["localId": [alice.localID]], headers: [API.admin])
            let guessed = try await http.post(Self.lookup, ["localId": [alice.localID]], headers: [("Authorization", "Bearer owner")])
            #expect(valid.status == 401 && valid.errorMessage?.contains("admin listener") == true)
            #expect(valid.body == guessed.body && guessed.status == 401)
            let clientPathBearer = try await http.post(
                "/v1/accounts:lookup?key=\(API.key)", ["localId": [alice.localID]], headers: [API.admin])
            #expect(clientPathBearer.status == 401, "a bearer on a client path is no admin either")
            #expect(try await http.post(Self.lookup, ["localId": [alice.localID]]).status == 403)
            #expect(
                try await api.client("batchDelete", ["localIds": [alice.localID], "force": true]).errorCode == "INSUFFICIENT_PERMISSION")
            // Apps keep everything they use on the public listener.
            #expect(try await api.signIn("alice@example.com").localID == alice.localID)
            #expect(try await http.get("/__/auth/action?mode=verifyEmail&oobCode=x&apiKey=\(API.key)").status != 404, "the action page")
            #expect(try await http.get("/.well-known/jwks.json").status == 200)

            // The admin listener: the admin's calls, with the route's own limits and the audit actor.
            let found = try await api.admin("lookup", ["localId": [alice.localID]])
            #expect(found.status == 200 && (found.json["users"] as? [[String: Any]])?.count == 1)
            #expect(try await api.admin("update", ["localId": alice.localID, "disableUser": true]).status == 200)
            let audit = try await api.admin("listAuditEvents", [:])
            let events = audit.json["events"] as? [[String: Any]] ?? []
            #expect(events.contains { ($0["actor"] as? String)?.contains("ops") == true }, "\(events)")
            #expect(
                try await http.admin.post(
                    "/v1/projects/acme-prod/accounts:lookup", ["localId": ["x"]], headers: [("Authorization", "Bearer wrong")]
                ).status == 401)
        }
    }

    @Test("the admin listener serves admins only: no API-key callers, no token route, no action page; health and keys are there")
    func adminListenerOnlyAdmins() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http, project: "acme-prod")
            let alice = try await api.signUp("alice@example.com")
            let admin = http.admin
            let client = try await admin.post(
                "/v1/accounts:signUp?key=\(API.key)", ["email": "bob@example.com", "password": "secret-pass"])
            #expect(client.status == 401 && client.errorMessage?.contains("admin callers only") == true)
            let refresh = try await admin.send(
                .POST, "/v1/token?key=\(API.key)", body: Data("grant_type=refresh_token&refresh_token=\(alice.refreshToken)".utf8),
                headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(refresh.status == 404)
            #expect(try await admin.get("/__/auth/action?mode=verifyEmail&oobCode=x&apiKey=\(API.key)").status == 404)
            #expect(try await admin.get("/readyz").status == 200)
            #expect(try await admin.get("/.well-known/jwks.json").status == 200)
            // Nobody was created through the admin listener's refused client call.
            #expect(try await api.admin("lookup", ["email": ["bob@example.com"]]).json["users"] == nil)
        }
    }

    @Test("a demo project keeps the emulator's one host: admins on the public listener too")
    func demoCombined() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let path = "/v1/projects/demo-test/accounts:lookup"
            #expect(try await http.post(path, ["localId": [alice.localID]], headers: [API.admin]).status == 200)
            #expect(try await http.admin.post(path, ["localId": [alice.localID]], headers: [API.admin]).status == 200)
            #expect(try await http.post(path, ["localId": [alice.localID]], headers: [("Authorization", "Bearer wrong")]).status == 401)
        }
    }

    @Test(
        "the built binary: accountctl finds its admin listener from ACCOUNTD_ADMIN_URL; pointed at the public port it is told it is not authorised"
    )
    func accountctlUsesTheAdminListener() async throws {
        let server = try await RunningServer(database: try await TestDatabase.createMigrated())
        let signUp = try await server.http.post(
            "/v1/accounts:signUp?key=\(RunningServer.apiKey)", ["email": "carol@example.com", "password": "secret-pass"])
        #expect(signUp.status == 200)
        let environment = ["ACCOUNTD_PROJECT_ID": RunningServer.project]
        let found = try await AccountctlTests.run(
            ["users", "get", "carol@example.com"], url: nil, token: RunningServer.adminToken,
            environment: environment.merging(["ACCOUNTD_ADMIN_URL": "http://127.0.0.1:\(server.adminPort)"]) { $1 })
        #expect(found.status == 0, "\(found.errors)")
        #expect(found.output.contains("carol@example.com"))
        let wrongPort = try await AccountctlTests.run(
            ["users", "get", "carol@example.com"], url: "http://127.0.0.1:\(server.port)", token: RunningServer.adminToken,
            environment: environment)
        #expect(wrongPort.status == 77, "\(wrongPort.output) \(wrongPort.errors)")
        try await server.stop()
    }
}
