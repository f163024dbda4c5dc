import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Prometheus

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The server's metrics: one Prometheus registry per server (so two servers in one process never
/// mix their counts), the swift-metrics factory the components report through, and `GET /metrics`
/// on the admin listener, which samples the gauges that are read rather than pushed (the pool, the
/// hashing lanes, the outboxes, the process) before it writes the exposition.
struct MetricsEndpoint: Sendable {
    /// The version `accountd_build_info` and `/openapi.json` report.
    static let version = "0.35.0"

    let registry: PrometheusCollectorRegistry
    let telemetry: Telemetry
    /// When the process started (for `process_start_time_seconds` and the uptime).
    let started: Date
    private let startedInstant: ContinuousClock.Instant

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Statements and pool waits are sub-millisecond: buckets from 100 µs.
        let fine: [Duration] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(1000),
            .seconds(5),
        ]
        for family in [MetricFamily.statementDuration, .poolWait, .revocationLag, .httpRequestDuration] {
            factory.durationHistogramBuckets[family.rawValue] = fine
        }
        factory.durationHistogramBuckets[MetricFamily.hashQueueWait.rawValue] = [
            .milliseconds(1), .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2), .seconds(5),
        ]
        telemetry = Telemetry(factory: factory)
        started = Date()
        startedInstant = .now
    }

    /// The fixed route `/metrics`, sampling `parts` at each scrape.
    func route(_ parts: Components) -> FixedRoute {
        FixedRoute { _, _ in
            await sample(parts)
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: .init(bytes: Self.withHelp(buffer))))
        }
    }

    /// Sets the gauges that are read, not pushed.
    private func sample(_ parts: Components) async {
        let pool = parts.postgres.figures()
        telemetry.set(.poolConnections, ["idle"], Double(pool.idle))
        telemetry.set(.poolConnections, ["leased"], Double(pool.leased))
        telemetry.set(.poolWaiters, [], Double(pool.waiters))
        telemetry.set(.poolMaxConnections, [], Double(parts.postgres.pool.maximumConnections))
        let depth = parts.hasher.depth
        telemetry.set(.hashQueueDepth, ["known"], Double(depth.known))
        telemetry.set(.hashQueueDepth, ["standard"], Double(depth.standard))
        // The probe: one short statement, which also reads the outboxes. It waits for a connection
        // a second at most, so a scrape answers while the database is away.
        do {
            let queues = try await RequestScope.$current.withValue(RequestScope(budget: .seconds(1))) {
                try await OutboxFigures.current(parts.postgres, logger: parts.logger)
            }
            for queue in queues {
                telemetry.set(.outboxDepth, [queue.name], Double(queue.depth))
                telemetry.set(.outboxOldestAge, [queue.name], queue.oldestAge)
            }
            telemetry.set(.databaseUp, [], 1)
        } catch {
            telemetry.set(.databaseUp, [], 0)
        }
        telemetry.set(.buildInfo, [Self.version], 1)
        let uptime = ContinuousClock.now - startedInstant
        telemetry.set(.uptime, [], Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18)
        telemetry.set(.startTime, [], started.timeIntervalSince1970.rounded(.down))
        let process = ProcessFigures.current()
        if let resident = process.residentBytes { telemetry.set(.residentMemory, [], Double(resident)) }
        if let cpu = process.cpuSeconds { telemetry.set(.cpuSeconds, [], cpu) }
        if let fds = process.openFDs { telemetry.set(.openFDs, [], Double(fds)) }
    }

    /// The exposition with a `# HELP` line before each family's `# TYPE` line (swift-metrics has
    /// no help text; ``MetricFamily`` has it). `process_cpu_seconds_total` is a counter by name
    /// and use, though it is sampled like a gauge: its `# TYPE` says counter.
    static func withHelp(_ exposition: [UInt8]) -> [UInt8] {
        var out = ""
        out.reserveCapacity(exposition.count + 4096)
        for line in String(decoding: exposition, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst(7).split(separator: " ").first.map(String.init) ?? ""
                if let family = MetricFamily(rawValue: name) {
                    out += "# HELP \(name) \(family.help)\n"
                    out += "# TYPE \(name) \(family.kind.rawValue)\n"
                    continue
                }
            }
            out += line
            out += "\n"
        }
        if out.hasSuffix("\n\n") { out.removeLast() }
        return Array(out.utf8)
    }
}

/// The process's own figures from `/proc/self` (Linux); nil where unavailable.
enum ProcessFigures {
    struct Sample {
        var residentBytes: Int?
        var cpuSeconds: Double?
        var openFDs: Int?
    }

    static func current() -> Sample {
        var sample = Sample()
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            // Fields after the command's closing parenthesis, from field 3 (state).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            if fields.count > 21, let user = Double(fields[11]), let system = Double(fields[12]), ticks > 0 {
                sample.cpuSeconds = (user + system) / ticks
            }
            if fields.count > 21, let pages = Int(fields[21]) {
                sample.residentBytes = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            sample.openFDs = entries.count
        }
        return sample
    }
}
