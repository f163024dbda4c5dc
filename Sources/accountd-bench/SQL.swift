import AccountPostgres
import ArgumentParser
import Foundation
import Logging
import PostgresNIO

/// `accountd-bench sql`: the admin lookup's statement run through the service's own store and
/// PostgresNIO pool, without HTTP, by concurrent workers for a fixed time. It prints JSON: queries
/// per second and this process's CPU per query. `scripts/bench` runs it next to pgbench, so a
/// lookup's cost splits into PostgreSQL's (pgbench), the driver's (this) and the HTTP server's.
struct BenchSQL: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Measure the lookup statement through the service's store, without HTTP (prints JSON).",
    )

    @Option(name: .customLong("database-url"), help: "The database to read.") var databaseURL: String
    @Option(help: "Seconds to run.") var seconds = 5.0
    @Option(help: "Concurrent workers (the wrk connections of the lookup workload).") var workers = 16
    @Option(help: "Users to pick from: emails are --email-prefix<N>@--email-domain, N in [0, users).") var users = 10_000
    @Option(name: .customLong("email-prefix")) var emailPrefix = "user"
    @Option(name: .customLong("email-domain")) var emailDomain = "bench.example"
    @Option(name: .customLong("minimum-connections"), help: "Pool minimum (default: the service's, the maximum).")
    var minimumConnections: Int?
    @Option(name: .customLong("keep-alive-seconds"), help: "Pool keep-alive (default: the service's, none).")
    var keepAliveSeconds: Int64?

    func run() async throws {
        let logger = Logger(label: "accountd-bench.sql")
        let pool = PoolSettings(minimumConnections: minimumConnections, keepAliveSeconds: keepAliveSeconds)
        let database = try ConnectionPool(url: try DatabaseURL(databaseURL), pool: pool, logger: logger)
        let store = PostgresAccountStore(database: database, logger: logger)
        let (users, prefix, domain) = (users, emailPrefix, emailDomain)
        let result = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.run() }
            defer { group.cancelAll() }
            let lookup: @Sendable () async throws -> Void = {
                _ = try await store.users(localIDs: [], emails: ["\(prefix)\(Int.random(in: 0..<users))@\(domain)"], phoneNumbers: [])
            }
            // Warm-up: every worker's connection open and every statement prepared.
            _ = try await Self.measure(seconds: min(2, seconds), workers: workers, lookup)
            return try await Self.measure(seconds: seconds, workers: workers, lookup)
        }
        let output: [String: Any] = [
            "workers": workers, "minimumConnections": pool.minimumConnections, "maximumConnections": pool.maximumConnections,
            "keepAliveSeconds": pool.keepAliveSeconds ?? 0,
            "queriesPerSecond": (result.perSecond * 10).rounded() / 10, "clientCPUMicrosecondsPerQuery": result.cpuMicroseconds.rounded(),
        ]
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    }

    /// `body` run by `workers` concurrent loops for `seconds`: calls per second and this process's
    /// CPU time (user + system) per call.
    static func measure(seconds: Double, workers: Int, _ body: @escaping @Sendable () async throws -> Void) async throws
        -> (perSecond: Double, cpuMicroseconds: Double)
    {
        let cpu = Self.processCPUSeconds()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var done = 0
                    while ContinuousClock.now < deadline {
                        try await body()
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = start.duration(to: .now)
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(count) / wall, (Self.processCPUSeconds() - cpu) / Double(max(count, 1)) * 1e6)
    }

    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
        return Double(seconds) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
