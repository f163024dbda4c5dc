import AccountPostgres
import AccountTesting
import Foundation
import Synchronization

/// The load the database fault suites run on two replicas: each worker cycles through a refresh
/// of its own session, a sign-up, a sign-in and an admin lookup, alternating replicas, and records
/// what came back.
final class DatabaseLoad: Sendable {
    struct Report {
        var ok = 0
        var unavailable = 0
        var unexpected: [String] = []
        /// The sign-ups answered 200, in the order they were answered.
        var acknowledged: [String] = []
        var slowest = Duration.zero
        /// Answers that took longer than the request deadline (and a second for the machine).
        var late: [String] = []
        /// When each 200 came back.
        var successes: [ContinuousClock.Instant] = []
        /// When each 200 came back, per replica.
        var successesByReplica: [[ContinuousClock.Instant]] = [[], []]
        /// Refreshes refused (not a 503): after a failover that lost writes, a worker's session may
        /// be gone. The worker signs in again and goes on.
        var refusedRefreshes: [String] = []
    }

    private let state: Mutex<(stopped: Bool, report: Report, tokens: [String])>
    private let emails: [String]
    /// Whether a refused refresh is recorded as such (and the worker signs in again) rather than
    /// as an unexpected answer.
    private let toleratesRefusedRefreshes: Bool

    init(sessions: [Session], toleratesRefusedRefreshes: Bool = false) {
        state = Mutex((false, Report(), sessions.map(\.refreshToken)))
        emails = (0..<sessions.count).map { "worker\($0)@load.example" }
        self.toleratesRefusedRefreshes = toleratesRefusedRefreshes
    }

    func stop() { state.withLock { $0.stopped = true } }
    func report() -> Report { state.withLock { $0.report } }
    func tokens() -> [String] { state.withLock { $0.tokens } }

    func run(worker: Int, apis: [API], deadline: Int) async {
        var step = 0
        while !state.withLock({ $0.stopped }) {
            let replica = (worker + step) % 2
            let api = apis[replica]
            let started = ContinuousClock.now
            let token = state.withLock { $0.tokens[worker] }
            // A worker whose refresh was refused signs in again instead.
            let operation = step % 4 == 0 && token.isEmpty ? 2 : step % 4
            var signedUp: String?
            let reply: TestHTTPClient.Reply?
            do {
                switch operation {
                case 0:
                    reply = try await api.refresh(token)
                case 1:
                    signedUp = "w\(worker)-\(step)@load.example"
                    reply = try await api.client("signUp", ["email": signedUp!, "password": "secret-pass", "returnSecureToken": true])
                case 2:
                    reply = try await api.client("signInWithPassword", ["email": emails[worker], "password": "secret-pass"])
                default:
                    reply = try await api.admin("lookup", ["email": [emails[worker]]])
                }
            } catch {
                reply = nil
                state.withLock { $0.report.unexpected.append("op \(operation): \(error)") }
            }
            let elapsed = ContinuousClock.now - started
            state.withLock { state in
                state.report.slowest = max(state.report.slowest, elapsed)
                if elapsed > .seconds(deadline + 1) {
                    state.report.late.append("op \(operation) \(reply.map { "\($0.status)" } ?? "no answer") after \(elapsed)")
                }
                guard let reply else { return }
                switch reply.status {
                case 200:
                    state.report.ok += 1
                    let now = ContinuousClock.now
                    state.report.successes.append(now)
                    state.report.successesByReplica[replica].append(now)
                    // A sign-in hands the worker a session of its own again (after a refused refresh).
                    if operation == 0 || (operation == 2 && state.tokens[worker].isEmpty),
                        let token = reply.json["refresh_token"] as? String ?? reply.json["refreshToken"] as? String
                    {
                        state.tokens[worker] = token
                    }
                    if let signedUp { state.report.acknowledged.append(signedUp) }
                case 503 where reply.header("Retry-After") != nil:
                    state.report.unavailable += 1
                case 400 where operation == 0 && toleratesRefusedRefreshes:
                    state.report.refusedRefreshes.append(reply.errorCode ?? "\(reply.status)")
                    state.tokens[worker] = ""
                default:
                    state.report.unexpected.append(
                        "op \(operation): \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
                }
            }
            step += 1
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension DatabaseLoad {
    /// How many workers the fault suites run.
    static let workers = 6

    /// Two replicas of the built server on `url` with `environment`, their APIs, and a load whose
    /// workers have signed up (one user each, alternating replicas).
    static func onTwoReplicas(_ url: DatabaseURL, environment: [String: String], toleratesRefusedRefreshes: Bool = false)
        async throws -> (replicas: [RunningServer], apis: [API], load: DatabaseLoad)
    {
        let replicas = [
            try await RunningServer(database: url, environment: environment),
            try await RunningServer(database: url, environment: environment),
        ]
        let apis = replicas.map { API(http: $0.http, project: RunningServer.project) }
        var sessions: [Session] = []
        for worker in 0..<workers { sessions.append(try await apis[worker % 2].signUp("worker\(worker)@load.example")) }
        return (replicas, apis, DatabaseLoad(sessions: sessions, toleratesRefusedRefreshes: toleratesRefusedRefreshes))
    }
}
