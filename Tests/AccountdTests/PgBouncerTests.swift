import AccountPostgres
import AccountTesting
import Foundation
import Glibc
import PostgresNIO
import Testing

/// Issue 37: accountd behind PgBouncer in transaction mode, where each transaction may run on a
/// different server connection. The traps, and what the configuration does about them: named
/// prepared statements (`ACCOUNTD_DB_PREPARED_STATEMENTS=off`), startup parameters PgBouncer
/// refuses (the timeouts set on the role instead), and the sessions a transaction pool cannot keep
/// (`LISTEN`, the migrations' advisory lock: `ACCOUNTD_DATABASE_SESSION_URL` straight to
/// PostgreSQL).
@Suite("Behind PgBouncer")
struct PgBouncerTests {
    static let binary = "/usr/sbin/pgbouncer"
    /// Server connections PgBouncer keeps for the database: fewer than the two replicas' pools.
    static let serverConnections = 3

    @Test(
        "two replicas through PgBouncer in transaction mode, 16 pooled connections over 3 server ones: 200 only, revocations reach both"
    )
    func transactionMode() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "pgbouncer is not installed (scripts/test installs it)")
        try await PrivateCluster.with { cluster in
            let direct = try await cluster.createMigratedDatabase()
            // The timeouts a startup parameter would set, on the role instead.
            try await TestDatabase.execute("ALTER ROLE postgres SET lock_timeout = '5s'", on: direct)
            try await TestDatabase.execute("ALTER ROLE postgres SET statement_timeout = '10s'", on: direct)
            let bouncer = try await Bouncer(upstream: cluster.port)
            var failure: (any Error)?
            do {
                try await Self.underLoad(through: bouncer, direct: direct)
            } catch {
                failure = error
            }
            bouncer.stop()
            if let failure { throw failure }
        }
    }

    static func underLoad(through bouncer: Bouncer, direct: DatabaseURL) async throws {
        var environment = DatabaseRestartTests.environment
        environment["ACCOUNTD_DB_MAX_CONNECTIONS"] = "8"
        environment["ACCOUNTD_DB_PREPARED_STATEMENTS"] = "off"
        environment["ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS"] = "0"
        environment["ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS"] = "0"
        environment["ACCOUNTD_DATABASE_SESSION_URL"] = direct.string
        let url = try DatabaseURL("postgres://postgres@127.0.0.1:\(bouncer.port)/accountd")
        let (replicas, apis, load) = try await DatabaseLoad.onTwoReplicas(url, environment: environment)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<DatabaseLoad.workers {
                group.addTask { await load.run(worker: worker, apis: apis, deadline: DatabaseRestartTests.deadline) }
            }
            defer { load.stop() }
            try await waitFor("400 answers through PgBouncer") { load.report().ok + load.report().unexpected.count >= 400 }
            load.stop()
            try await group.waitForAll()
        }
        let report = load.report()
        print("pgbouncer probe: answers 200 \(report.ok) / 503 \(report.unavailable) / other \(report.unexpected.count)")
        #expect(report.unexpected.isEmpty, "\(report.unexpected.prefix(5))")
        #expect(report.unavailable == 0)
        // Every acknowledged sign-up is there, and the tokens still refresh.
        let reply = try await apis[0].admin("lookup", ["email": Array(report.acknowledged.suffix(50))])
        #expect((reply.json["users"] as? [Any])?.count == min(50, report.acknowledged.count))
        for (worker, token) in load.tokens().enumerated() {
            #expect(try await apis[worker % 2].refresh(token).status == 200, "worker \(worker)")
        }
        // PgBouncer multiplexed: the replicas' 16 pooled connections reached PostgreSQL as at most
        // its 3 server connections, beside what each replica holds on the session URL (its
        // listener's, and its session pool's two: migrations, the listener's probe) and this count.
        let backends = try await TestDatabase.withClient(direct) { client in
            try await client.query(
                "SELECT count(*)::int FROM pg_stat_activity WHERE datname = 'accountd' AND backend_type = 'client backend'"
            ).decode(Int.self).first ?? -1
        }
        #expect(backends <= serverConnections + 2 * 3 + 1, "\(backends) server connections")
        // The listeners hold their LISTEN on the session URL: a revocation reaches both replicas.
        try await DatabaseRestartTests.revocationReachesBoth(apis)
        for replica in replicas { #expect(replica.process.isRunning) }
    }
}

/// A PgBouncer in transaction mode in front of a cluster on loopback, run as the `postgres` user
/// (it refuses to run as root), with trust authentication.
final class Bouncer: Sendable {
    let port: Int
    let directory: String
    let process: ChildProcess

    init(upstream: Int) async throws {
        port = try RunningServer.freePort(outsideEphemeralRange: true)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-pgbouncer-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "\"postgres\" \"\"\n".write(toFile: "\(directory)/users.txt", atomically: true, encoding: .utf8)
        try """
        [databases]
        accountd = host=127.0.0.1 port=\(upstream) dbname=accountd user=postgres
        [pgbouncer]
        listen_addr = 127.0.0.1
        listen_port = \(port)
        unix_socket_dir =
        auth_type = trust
        auth_file = \(directory)/users.txt
        pool_mode = transaction
        default_pool_size = \(PgBouncerTests.serverConnections)
        max_client_conn = 200
        logfile = \(directory)/pgbouncer.log
        pidfile = \(directory)/pgbouncer.pid

        """.write(toFile: "\(directory)/pgbouncer.ini", atomically: true, encoding: .utf8)
        if getuid() == 0 { _ = try await PrivateCluster.run("/bin/chown", ["-R", "postgres:postgres", directory]) }
        let command = [PgBouncerTests.binary, "\(directory)/pgbouncer.ini"]
        process =
            getuid() == 0
            ? try ChildProcess("/usr/sbin/runuser", ["-u", "postgres", "--"] + command, environment: ["PATH": "/usr/bin:/bin"])
            : try ChildProcess(command[0], Array(command.dropFirst()), environment: ["PATH": "/usr/bin:/bin"])
        // Up once it answers a connection.
        try await waitFor("pgbouncer listening on \(port)") {
            (try? await TestDatabase.withClient(try DatabaseURL("postgres://postgres@127.0.0.1:\(port)/accountd")) { client in
                try await client.query("SELECT 1").decode(Int.self).first
            }) == 1
        }
    }

    func stop() {
        // pgbouncer itself, not only runuser (which passes the signal on, but is not relied on).
        if let text = try? String(contentsOfFile: "\(directory)/pgbouncer.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGTERM)
        }
        process.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
