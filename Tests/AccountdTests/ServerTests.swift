import AccountPostgres
import AccountTesting
import Foundation
import Hummingbird
import NIOHTTP1
import Testing

@testable import accountd

@Suite("The server boots on a fresh database and answers in Firebase's shapes")
struct ServerTests {
    @Test("healthz and readyz answer on a migrated database")
    func probes() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let health = try await http.get("/healthz")
            #expect(health.status == 200)
            #expect(health.string("status") == "ok")
            #expect(health.header("X-Request-Id")?.isEmpty == false)
            let ready = try await eventuallyReady(http)
            #expect(ready.status == 200)
            #expect(ready.string("status") == "ready")
        }
    }

    @Test("an unknown RPC answers a Firebase-shaped 404, in every URL spelling")
    func unknownRPC() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            for path in [
                "/v1/accounts:noSuchThing?key=test-api-key",
                "/identitytoolkit.googleapis.com/v1/accounts:noSuchThing?key=test-api-key",
                "/v1/projects/demo-test/accounts:noSuchThing",
                "/nothing/here",
            ] {
                let reply = try await http.post(path, [:], headers: [("Authorization", "Bearer test-admin-token-7Hq2vX9pL4mZ8wR")])
                #expect(reply.status == 404, "\(path)")
                let error = try #require(reply.json["error"] as? [String: Any])
                #expect(error["code"] as? Int == 404)
                #expect(error["status"] as? String == "NOT_FOUND")
                let errors = try #require(error["errors"] as? [[String: Any]])
                #expect(errors.first?["message"] as? String == error["message"] as? String)
            }
        }
    }

    @Test("a tenant path answers UNSUPPORTED_TENANT_OPERATION; OPTIONS answers CORS")
    func tenantsAndCORS() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let tenant = try await http.post(
                "/v1/projects/demo-test/tenants/t1/accounts:lookup", [:],
                headers: [("Authorization", "Bearer test-admin-token-7Hq2vX9pL4mZ8wR")]
            )
            #expect(tenant.status == 400)
            #expect(tenant.errorCode == "UNSUPPORTED_TENANT_OPERATION")

            let preflight = try await http.send(
                .OPTIONS, "/v1/accounts:signUp",
                headers: [("Origin", "http://localhost:5173"), ("Access-Control-Request-Headers", "content-type,x-client-version")]
            )
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "http://localhost:5173")
            #expect(preflight.header("Access-Control-Allow-Headers") == "content-type,x-client-version")
        }
    }

    @Test("serve refuses to start while a migration is pending, and migrates with --migrate")
    func pendingMigrationBlocks() async throws {
        let database = try await TestDatabase.createEmpty()
        var configuration = testConfiguration()
        // Not migrated: the server must refuse to start (runService throws, it does not hang),
        // naming the file and the fix.
        let app = try await buildApplication(configuration, databaseURL: database, logger: TestDatabase.logger)
        await #expect {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await app.runService(gracefulShutdownSignals: []) }
                group.addTask {
                    try await Task.sleep(for: .seconds(20))
                    throw CancellationError()
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } throws: { error in
            guard case MigrationError.pending(let names) = error else { return false }
            return names.first == "0001_create_schema.sql"
                && (error as? MigrationError)?.description.contains("accountd migrate") == true
        }
        // With --migrate it migrates and serves.
        configuration.database.migrateOnStart = true
        try await withServer(configuration, database: database) { http in
            let ready = try await eventuallyReady(http)
            #expect(ready.status == 200)
        }
    }
}

/// `/readyz` once it answers 200 (the last answer if it never does): the probe gives the database
/// 2 s, which a machine busy with the rest of the suite can exceed once.
func eventuallyReady(_ http: TestHTTPClient) async throws -> TestHTTPClient.Reply {
    var reply = try await http.get("/readyz")
    _ = try await eventually(interval: .milliseconds(200)) {
        if reply.status != 200 { reply = try await http.get("/readyz") }
        return reply.status == 200
    }
    return reply
}
