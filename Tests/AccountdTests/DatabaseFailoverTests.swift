import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Glibc
import PostgresNIO
import Testing

@testable import accountd

/// Issue 37's failover, for real on loopback: a primary and a streaming hot standby
/// (`pg_basebackup -R`), accountd given both in one multi-host URL; the primary stopped, the
/// standby promoted (`pg_ctl promote`). accountd keeps answering 200 or 503 with `Retry-After`,
/// and finds the new primary on its own.
@Suite("PostgreSQL failover")
struct DatabaseFailoverTests {
    static let bin = "/usr/lib/postgresql/15/bin"

    /// Runs a PostgreSQL program as the `postgres` user when the suite runs as root.
    static func asPostgres(_ program: String, _ arguments: [String]) async throws -> String {
        getuid() == 0
            ? try await PrivateCluster.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
            : try await PrivateCluster.run(program, arguments)
    }

    @Test("a multi-host URL: the standby refused for writes, then promoted and found; 200 or 503 with Retry-After meanwhile")
    func followsPromotion() async throws {
        try await PrivateCluster.with { primary in
            _ = try await primary.createMigratedDatabase()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-standby-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if getuid() == 0 { _ = try await PrivateCluster.run("/bin/chown", ["postgres:postgres", directory]) }
            defer { try? FileManager.default.removeItem(atPath: directory) }
            _ = try await Self.asPostgres(
                "\(Self.bin)/pg_basebackup",
                [
                    "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", "\(directory)/pgdata", "-R", "-X", "stream",
                    "--checkpoint=fast",
                ])
            let standbyPort = try RunningServer.freePort(outsideEphemeralRange: true)
            let script = PrivateCluster.root.appendingPathComponent("scripts/dev-postgres").path
            _ = try await PrivateCluster.run(script, ["start", directory, String(standbyPort)])
            var failure: (any Error)?
            do {
                let both = try DatabaseURL("postgres://postgres@127.0.0.1:\(primary.port),127.0.0.1:\(standbyPort)/accountd")
                #expect(both.targetSessionAttrs == .readWrite)
                // Listed standby first: the pool must skip it while it is read-only.
                let standbyFirst = try DatabaseURL("postgres://postgres@127.0.0.1:\(standbyPort),127.0.0.1:\(primary.port)/accountd")
                var configuration = productionConfiguration()
                configuration.database.pool.waitSeconds = 2
                try await withServer(configuration, database: standbyFirst) { http in
                    let api = API(http: http, project: "acme-prod")
                    let alice = try await api.signUp("alice@failover.example")
                    // The standby has her once it has replayed the primary's WAL.
                    try await waitFor("the standby to replay the sign-up") {
                        let replica = DatabaseURL(
                            socketDirectory: "\(directory)/pgdata", port: standbyPort, username: "postgres", database: "accountd")
                        let count = try? await TestDatabase.withClient(replica) { client in
                            try await client.query("SELECT count(*)::int FROM users WHERE email = 'alice@failover.example'")
                                .decode(Int.self).first ?? 0
                        }
                        return count == 1
                    }
                    try await primary.stopServer()
                    // No primary: every answer is 503 with Retry-After (or 200), never anything else.
                    for attempt in 0..<3 {
                        let reply = try await api.client(
                            "signUp", ["email": "during\(attempt)@failover.example", "password": "secret-pass", "returnSecureToken": true])
                        #expect(
                            reply.status == 503 || reply.status == 200, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
                        if reply.status == 503 { #expect(reply.header("Retry-After") != nil) }
                    }
                    let promoted = ContinuousClock.now
                    _ = try await Self.asPostgres("\(Self.bin)/pg_ctl", ["-D", "\(directory)/pgdata", "-w", "-t", "60", "promote"])
                    // Service resumes on the new primary: a write, and the replicated account signs in.
                    var resumed: Duration?
                    try await waitFor("a write on the promoted standby") {
                        let reply = try await api.client(
                            "signUp", ["email": "after@failover.example", "password": "secret-pass", "returnSecureToken": true])
                        if reply.status == 200 { resumed = ContinuousClock.now - promoted }
                        return reply.status == 200
                    }
                    print("failover probe: first write \(resumed.map { "\($0)" } ?? "never") after the promotion")
                    #expect(try await api.signIn("alice@failover.example").idToken.isEmpty == false)
                    #expect(try await api.refresh(alice.refreshToken).status == 200)
                    _ = both
                }
            } catch {
                failure = error
            }
            _ = try? await PrivateCluster.run(script, ["stop", directory])
            if let failure { throw failure }
        }
    }
}
