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

    /// One server of a replicated pair.
    struct Node: Sendable, CustomStringConvertible {
        let name: String
        let directory: String
        let port: Int
        var description: String { name }
        var pgdata: String { "\(directory)/pgdata" }
        func url(_ database: String) throws -> DatabaseURL { try DatabaseURL("postgres://postgres@127.0.0.1:\(port)/\(database)") }

        /// Starts the server (durable: it can stream and be rewound).
        func start() async throws {
            _ = try await PrivateCluster.run(
                PrivateCluster.root.appendingPathComponent("scripts/dev-postgres").path, ["start", directory, String(port), "durable"])
        }
        func stop(mode: String) async throws {
            _ = try await DatabaseFailoverTests.asPostgres(
                "\(DatabaseFailoverTests.bin)/pg_ctl", ["-D", pgdata, "-m", mode, "-w", "-t", "60", "stop"])
        }
        func promote() async throws {
            _ = try await DatabaseFailoverTests.asPostgres(
                "\(DatabaseFailoverTests.bin)/pg_ctl", ["-D", pgdata, "-w", "-t", "60", "promote"])
        }
        /// Rejoins a stopped former primary as a standby of `source`: `pg_rewind` (which runs the
        /// crash recovery an immediate stop left owing first) and `-R` for the standby settings.
        func rewind(from source: Node) async throws {
            // A promoted server records its new timeline at its first checkpoint; pg_rewind reads
            // the timeline there, and before it would find nothing to rewind.
            try await source.execute("CHECKPOINT")
            _ = try await DatabaseFailoverTests.asPostgres(
                "\(DatabaseFailoverTests.bin)/pg_rewind",
                ["-D", pgdata, "--source-server=host=127.0.0.1 port=\(source.port) user=postgres dbname=postgres", "-R"])
            try await start()
        }
        func execute(_ sql: String) async throws { try await TestDatabase.execute(sql, on: try url("postgres")) }
        func count(_ sql: String, database: String = "postgres") async throws -> Int {
            try await TestDatabase.withClient(try url(database)) { client in
                try await client.query(PostgresQuery(unsafeSQL: sql)).decode(Int.self).first ?? -1
            }
        }
    }

    /// A hot standby of `primary`, streaming, in a directory of its own.
    static func standby(of primary: Node, name: String) async throws -> Node {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-standby-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { _ = try await PrivateCluster.run("/bin/chown", ["postgres:postgres", directory]) }
        _ = try await asPostgres(
            "\(bin)/pg_basebackup",
            [
                "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", "\(directory)/pgdata", "-R", "-X", "stream",
                "--checkpoint=fast",
            ])
        let node = Node(name: name, directory: directory, port: try RunningServer.freePort(outsideEphemeralRange: true))
        try await node.start()
        return node
    }

    /// Runs a PostgreSQL program as the `postgres` user when the suite runs as root.
    static func asPostgres(_ program: String, _ arguments: [String]) async throws -> String {
        getuid() == 0
            ? try await PrivateCluster.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
            : try await PrivateCluster.run(program, arguments)
    }

    /// Runs `body` with a hot standby of `primary`, then stops and removes the standby.
    static func withStandby(of primary: Node, name: String, _ body: (Node) async throws -> Void) async throws {
        let standby = try await standby(of: primary, name: name)
        var failure: (any Error)?
        do { try await body(standby) } catch { failure = error }
        _ = try? await PrivateCluster.run(
            PrivateCluster.root.appendingPathComponent("scripts/dev-postgres").path, ["stop", standby.directory])
        try? FileManager.default.removeItem(atPath: standby.directory)
        if let failure { throw failure }
    }

    @Test("a multi-host URL: the standby refused for writes, then promoted and found; 200 or 503 with Retry-After meanwhile")
    func followsPromotion() async throws {
        try await PrivateCluster.with { cluster in
            _ = try await cluster.createMigratedDatabase()
            let primary = Node(name: "primary", directory: cluster.directory, port: cluster.port)
            try await Self.withStandby(of: primary, name: "standby") { standby in
                let both = try DatabaseURL("postgres://postgres@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/accountd")
                #expect(both.targetSessionAttrs == .readWrite)
                // Listed standby first: the pool must skip it while it is read-only.
                let standbyFirst = try DatabaseURL("postgres://postgres@127.0.0.1:\(standby.port),127.0.0.1:\(primary.port)/accountd")
                var configuration = productionConfiguration()
                configuration.database.pool.waitSeconds = 2
                try await withServer(configuration, database: standbyFirst) { http in
                    let api = API(http: http, project: "acme-prod")
                    let alice = try await api.signUp("alice@failover.example")
                    // The standby has her once it has replayed the primary's WAL.
                    try await waitFor("the standby to replay the sign-up") {
                        (try? await standby.count(
                            "SELECT count(*)::int FROM users WHERE email = 'alice@failover.example'", database: "accountd")) == 1
                    }
                    try await cluster.stopServer()
                    // No primary: every answer is 503 with Retry-After (or 200), never anything else.
                    for attempt in 0..<3 {
                        let reply = try await api.client(
                            "signUp", ["email": "during\(attempt)@failover.example", "password": "secret-pass", "returnSecureToken": true])
                        #expect(
                            reply.status == 503 || reply.status == 200, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
                        if reply.status == 503 { #expect(reply.header("Retry-After") != nil) }
                    }
                    let promoted = ContinuousClock.now
                    try await standby.promote()
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
                }
            }
        }
    }

    @Test(
        "a primary turned read-only under open connections: writes answer 503 with Retry-After (never 500), the connections that met it are replaced, writes resume once it accepts them"
    )
    func demotedUnderTheConnections() async throws {
        try await PrivateCluster.with { cluster in
            let database = try await cluster.createMigratedDatabase()
            var configuration = productionConfiguration()
            // One pooled connection, so the sign-ups below must meet the refusal on the connection
            // opened before the demotion (a pool of several hands out the last idle one, and an
            // older one no write reached would rightly stay open).
            configuration.database.pool = PoolSettings(maximumConnections: 1, waitSeconds: 2)
            try await withServer(configuration, database: database) { http in
                let api = API(http: http, project: "acme-prod")
                _ = try await api.signUp("before@demoted.example")
                let pooled = """
                    SELECT count(*)::int FROM pg_stat_activity
                    WHERE datname = 'accountd' AND pid <> pg_backend_pid() AND query NOT LIKE 'LISTEN%' AND backend_start < $1
                    """
                let demoted = Date()
                // As a demoted primary's sessions do: every transaction from now on is read-only,
                // in the sessions already open too.
                try await TestDatabase.execute("ALTER SYSTEM SET default_transaction_read_only = on", on: cluster.url)
                try await TestDatabase.execute("SELECT pg_reload_conf()", on: cluster.url)
                try await waitFor("the open sessions to be read-only") {
                    (try? await TestDatabase.withClient(database) { client in
                        try await client.query("SHOW default_transaction_read_only").decode(String.self).first
                    }) == "on"
                }
                // Writes (sign-ups, and the abuse limits' own writes before them) meet 25006.
                for attempt in 0..<4 {
                    let reply = try await api.client(
                        "signUp", ["email": "during\(attempt)@demoted.example", "password": "secret-pass", "returnSecureToken": true])
                    #expect(reply.status == 503, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
                    #expect(reply.header("Retry-After") != nil)
                }
                // Reads still answer from the read-only server.
                #expect(try await api.admin("lookup", ["email": ["before@demoted.example"]]).status == 200)
                // The pooled connection that met the refusal was closed: none opened before the
                // demotion is left (the listeners' own sessions aside).
                let left = try await TestDatabase.withClient(database) { client in
                    try await client.query(
                        PostgresQuery(
                            unsafeSQL: pooled,
                            binds: {
                                var binds = PostgresBindings()
                                binds.append(demoted)
                                return binds
                            }())
                    ).decode(Int.self).first ?? -1
                }
                #expect(left == 0, "\(left) pooled connection(s) from before the demotion still open")
                try await TestDatabase.execute("ALTER SYSTEM RESET default_transaction_read_only", on: cluster.url)
                try await TestDatabase.execute("SELECT pg_reload_conf()", on: cluster.url)
                try await waitFor("a write once the server accepts them again") {
                    try await api.client(
                        "signUp", ["email": "after@demoted.example", "password": "secret-pass", "returnSecureToken": true]
                    ).status == 200
                }
            }
        }
    }

    /// What one switch-over did.
    struct Round: CustomStringConvertible {
        var name = ""
        /// From the promote command to each replica's first 200.
        var firstSuccess: [Duration?] = []
        /// 503s (all with Retry-After) from the stop until both replicas answered 200 again.
        var unavailable = 0
        /// Sign-ups answered 200 before the stop, and those of them the new primary lacks.
        var acknowledged = 0
        var lost: [String] = []
        var description: String {
            "\(name): first 200 after the promotion \(firstSuccess.map { $0.map { "\($0)" } ?? "none" }), 503s during the switch \(unavailable), acknowledged sign-ups \(acknowledged), lost \(lost.count)"
        }
    }

    @Test(
        "failover under load on two replicas: synchronous and immediate, then asynchronous fast and immediate, the old primary rewound each time; 200 or 503 only, no acknowledged write lost with a synchronous standby"
    )
    func failoverUnderLoad() async throws {
        try await PrivateCluster.with(durable: true) { cluster in
            _ = try await cluster.createMigratedDatabase()
            let a = Node(name: "A", directory: cluster.directory, port: cluster.port)
            // Room for the rewound server to catch up from the divergence point; and hint bits
            // logged in the configuration file too (not only on the command line), for the crash
            // recovery pg_rewind runs in single-user mode.
            try await a.execute("ALTER SYSTEM SET wal_keep_size = '256MB'")
            try await a.execute("ALTER SYSTEM SET wal_log_hints = on")
            try await a.execute("SELECT pg_reload_conf()")
            try await Self.withStandby(of: a, name: "B") { b in try await Self.failoverUnderLoad(a, b) }
        }
    }

    static func failoverUnderLoad(_ a: Node, _ b: Node) async throws {
        let url = try DatabaseURL("postgres://postgres@127.0.0.1:\(a.port),127.0.0.1:\(b.port)/accountd")
        let (replicas, apis, load) = try await DatabaseLoad.onTwoReplicas(
            url, environment: DatabaseRestartTests.environment, toleratesRefusedRefreshes: true)
        let workers = DatabaseLoad.workers

        let rounds = try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask { await load.run(worker: worker, apis: apis, deadline: DatabaseRestartTests.deadline) }
            }
            defer { load.stop() }
            var rounds: [Round] = []
            var lostBefore: Set<String> = []
            // A to B with a synchronous standby, the primary killed; then back to A and again to B
            // asynchronously, stopped fast, then killed while its standby had fallen behind.
            for (primary, standby, synchronous, mode, stall) in [
                (a, b, true, "immediate", false), (b, a, false, "fast", false), (a, b, false, "immediate", true),
            ] {
                if !rounds.isEmpty {
                    // The former primary rejoins as a standby of the current one.
                    try await standby.rewind(from: primary)
                }
                var round = try await Self.switchOver(
                    from: primary, to: standby, synchronous: synchronous, mode: mode, stall: stall, load: load, apis: apis,
                    replicas: replicas)
                round.lost.removeAll { lostBefore.contains($0) }
                lostBefore.formUnion(round.lost)
                print("failover probe: \(round)")
                rounds.append(round)
            }
            load.stop()
            try await group.waitForAll()
            return rounds
        }

        let report = load.report()
        print(
            "failover probe: answers 200 \(report.ok) / 503 \(report.unavailable) / other \(report.unexpected.count),",
            "refused refreshes \(report.refusedRefreshes.count), later than the deadline \(report.late.count), slowest \(report.slowest)")
        for replica in replicas { #expect(replica.process.isRunning, "a replica died") }
        #expect(report.unexpected.isEmpty, "answers other than 200 or 503: \(report.unexpected.prefix(10))")
        #expect(report.slowest < .seconds(DatabaseRestartTests.requestTimeout * 3), "slowest answer \(report.slowest)")
        // No session was lost or revoked by a switch: a rotation the new primary lacks is caught up
        // with (RefreshRules), not taken for reuse.
        #expect(report.refusedRefreshes.isEmpty, "refused refreshes: \(report.refusedRefreshes)")
        // With a synchronous standby, every acknowledged write survived the primary's death.
        #expect(rounds[0].lost.isEmpty, "lost with a synchronous standby: \(rounds[0].lost)")
        // An asynchronous standby that had fallen behind lost what the primary acknowledged meanwhile
        // (PostgreSQL's promise, not accountd's): the measurement sees it.
        #expect(!rounds[2].lost.isEmpty, "\(rounds[2])")
        for round in rounds {
            #expect(round.firstSuccess.allSatisfy { $0 != nil }, "\(round)")
            // Within a few seconds of the promotion (loose: the client's clock on a loaded machine).
            #expect(round.firstSuccess.allSatisfy { ($0 ?? .seconds(60)) < .seconds(15) }, "\(round)")
        }
        for (worker, token) in load.tokens().enumerated() {
            #expect(try await apis[worker % 2].refresh(token).status == 200, "worker \(worker)")
        }
        // The listeners followed the primary: a revocation now reaches both replicas.
        try await DatabaseRestartTests.revocationReachesBoth(apis)
        // So did the outbox workers: a mail queued on the new primary (B) is attempted (its
        // webhook answers nothing, so it stays pending with attempts counted).
        #expect(
            try await apis[1].client("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "worker0@load.example"]).status == 200)
        try await waitFor("the mail queued after the failovers to be attempted") {
            (try? await b.count(
                "SELECT count(*)::int FROM email_outbox WHERE recipient = 'worker0@load.example' AND attempts > 0", database: "accountd"))
                == 1
        }
    }

    /// One switch-over under the running load: the standby streaming (synchronously or not), a
    /// session revoked, the primary stopped (`mode`), the standby promoted; returns when both
    /// replicas have answered 200 since. With `stall`, the primary's WAL sender is stopped first
    /// (a network partition, a saturated link) while the load goes on, and dies with the primary
    /// without sending what it held.
    static func switchOver(
        from primary: Node, to standby: Node, synchronous: Bool, mode: String, stall: Bool = false, load: DatabaseLoad, apis: [API],
        replicas: [RunningServer]
    ) async throws -> Round {
        var round = Round(
            name:
                "\(primary) to \(standby), \(synchronous ? "synchronous" : "asynchronous"), \(mode) stop\(stall ? ", the standby cut off" : "")"
        )
        try await primary.execute("ALTER SYSTEM SET synchronous_standby_names = '\(synchronous ? "*" : "")'")
        try await primary.execute("SELECT pg_reload_conf()")
        try await waitFor("\(standby) streaming from \(primary)") {
            let state = synchronous ? "sync" : "async"
            return
                (try? await primary.count(
                    "SELECT count(*)::int FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = '\(state)'"))
                == 1
        }
        // The load has run on this primary.
        let before = load.report().ok
        try await waitFor("the load on \(primary)") { load.report().ok >= before + 20 }
        // A revocation made just before the switch still holds after it.
        let revoked = try await apis[0].signUp("revoked-\(UUID().uuidString.prefix(8))@load.example")
        #expect(try await apis[0].admin("revokeSessions", ["localId": revoked.localID]).status == 200)

        var sender: pid_t?
        if stall {
            sender = pid_t(try await primary.count("SELECT pid FROM pg_stat_replication"))
            kill(sender!, SIGSTOP)
            let stalled = load.report()
            try await waitFor("writes acknowledged while the standby is cut off") {
                let now = load.report()
                return now.acknowledged.count >= stalled.acknowledged.count + 8 && now.ok >= stalled.ok + 40
            }
        }
        let atStop = load.report()
        round.acknowledged = atStop.acknowledged.count
        if let sender {
            // The stop signals the sender, which cannot run; once the signal is pending, it is
            // killed before it could send anything.
            async let stopped: Void = primary.stop(mode: mode)
            try await waitFor("the stop to reach the stalled WAL sender") { Self.hasPendingQuit(sender) }
            kill(sender, SIGKILL)
            try await stopped
        } else {
            try await primary.stop(mode: mode)
        }
        let promoted = ContinuousClock.now
        try await standby.promote()
        // As a failover manager does: the new primary has no standby yet, so it must not wait for
        // one (its configuration came from its former primary).
        try await standby.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        try await standby.execute("SELECT pg_reload_conf()")
        try await waitFor("both replicas answering 200 after the promotion") {
            load.report().successesByReplica.allSatisfy { $0.last.map { $0 > promoted } ?? false }
        }
        let after = load.report()
        round.firstSuccess = after.successesByReplica.map { successes in successes.first { $0 > promoted }.map { $0 - promoted } }
        round.unavailable = after.unavailable - atStop.unavailable
        for replica in replicas { #expect(replica.process.isRunning, "a replica died in \(round.name)") }

        // What the new primary has of the writes acknowledged before the stop.
        let acknowledged = Array(atStop.acknowledged)
        let present = try await TestDatabase.withClient(try standby.url("accountd")) { client in
            var present: Set<String> = []
            for email in try await client.query("SELECT email FROM users WHERE email = ANY(\(acknowledged))").decode(String.self) {
                present.insert(email)
            }
            return present
        }
        round.lost = acknowledged.filter { !present.contains($0) }
        // The revocation, acknowledged before the stop, holds on both replicas (when it survived).
        if synchronous || round.lost.isEmpty {
            for api in apis {
                let reply = try await api.admin("verifyIdToken", ["idToken": revoked.idToken, "checkRevoked": true])
                #expect(reply.errorCode == "ID_TOKEN_REVOKED", "\(round.name): \(reply.status)")
            }
        }
        return round
    }

    /// Whether `process` has SIGQUIT pending (PostgreSQL's immediate-shutdown signal to its
    /// children), from `/proc/<pid>/status`; a process that has gone counts as signalled.
    static func hasPendingQuit(_ process: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return true }
        for line in status.split(separator: "\n") where line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") {
            if let mask = UInt64(line.split(separator: "\t").last ?? "", radix: 16), mask & (1 << (SIGQUIT - 1)) != 0 { return true }
        }
        return false
    }
}
