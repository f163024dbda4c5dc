import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import AccountTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOHTTP1
import PostgresNIO
import Synchronization
import Testing

@testable import accountd

/// A configuration for tests: a demo project with explicit keys, tokens and key-encryption key.
func testConfiguration(port: Int = 0) -> Configuration {
    var configuration = Configuration(projectID: "demo-test", logLevel: .warning)
    configuration.listen.port = port
    configuration.listen.adminPort = 0
    configuration.access.apiKeys = ["test-api-key"]
    configuration.access.adminTokens = ["test-admin-token-7Hq2vX9pL4mZ8wR": "ops"]
    configuration.accounts.authorizedDomains = ["localhost", "example.com"]
    configuration.keys.keyEncryptionKey = Array(repeating: 7, count: 32)
    configuration.database.migrationsDirectory = TestDatabase.migrationsDirectory.path
    configuration.database.dataDirectory = ".accountd-test"
    // The suite runs dozens of servers against one cluster: open connections on demand. Tests
    // that hold a user's row lock while a request waits on it (`whileUserLocked`) must not race
    // the lock timeout on a loaded machine: the one test of the timeout sets its own. For the
    // same reason requests wait for a connection up to 30 s; the fault tests set 2.
    // Ten per server is plenty for a test's few concurrent requests and keeps the suite's
    // dozens of servers within the cluster's max_connections.
    configuration.database.pool = PoolSettings(
        maximumConnections: 10, minimumConnections: 0, waitSeconds: 30, lockTimeoutSeconds: 60, statementTimeoutSeconds: 120)
    // Cheap hashes keep the suite fast; the defaults are tested in AccountCryptoTests.
    configuration.accounts.passwordHashParameters = .init(memoryKiB: 1024, iterations: 1)
    configuration.email.delivers = false
    // Long enough that no step of a test on a loaded machine falls outside it by accident;
    // tests that need to be past it move a ShiftedClock.
    configuration.accounts.refreshReuseGraceSeconds = 60
    // The in-process test issuers answer late when the machine is loaded: a fetch is refused
    // by its failure (a refused connection, an untrusted certificate), never by a slow answer.
    configuration.federation.fetchTimeoutSeconds = 60
    return configuration
}

/// The suite's configuration as production runs it: a project id without `demo-`, so nothing is on
/// development defaults (every key, token and the key-encryption key explicit, as in
/// ``testConfiguration(port:)``).
func productionConfiguration() -> Configuration {
    var configuration = testConfiguration()
    configuration.projectID = "acme-prod"
    return configuration
}

/// The system clock plus an offset a test can move forward: time still flows, and a test can jump
/// past a window without sleeping through it.
final class ShiftedClock: WallClock {
    private let offset = Mutex<TimeInterval>(0)

    func now() -> Date { Date() + offset.withLock { $0 } }

    /// Moves the service's "now" `seconds` ahead.
    func advance(_ seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// A client of the test server that speaks the way apps and admins do.
struct API: Sendable {
    let http: TestHTTPClient
    /// The project of admin routes (the configuration's project id).
    var project = "demo-test"
    static let key = "test-api-key"
    static let admin = ("Authorization", "Bearer test-admin-token-7Hq2vX9pL4mZ8wR")

    /// POSTs a client RPC (`accounts:NAME?key=…`).
    func client(_ rpc: String, _ body: [String: any Sendable] = [:], prefix: String = "") async throws -> TestHTTPClient.Reply {
        try await http.post("\(prefix)/v1/accounts:\(rpc)?key=\(Self.key)", body)
    }

    /// POSTs a project-scoped admin RPC to the admin listener.
    func admin(_ rpc: String, _ body: [String: any Sendable] = [:]) async throws -> TestHTTPClient.Reply {
        try await http.admin.post("/v1/projects/\(project)/accounts:\(rpc)", body, headers: [Self.admin])
    }

    /// Signs up with email and password and returns the reply (asserting success).
    func signUp(_ email: String, _ password: String = "secret-pass") async throws -> Session {
        let reply = try await client("signUp", ["email": email, "password": password, "returnSecureToken": true])
        guard reply.status == 200 else { throw TestDatabaseError("signUp failed: \(String(decoding: reply.body, as: UTF8.self))") }
        return Session(reply)
    }

    /// Signs in with a password (asserting success).
    func signIn(_ email: String, _ password: String = "secret-pass") async throws -> Session {
        let reply = try await client("signInWithPassword", ["email": email, "password": password, "returnSecureToken": true])
        guard reply.status == 200 else { throw TestDatabaseError("signIn failed: \(String(decoding: reply.body, as: UTF8.self))") }
        return Session(reply)
    }

    /// The token route, form-encoded as the JS SDK sends it.
    func refresh(_ token: String) async throws -> TestHTTPClient.Reply {
        let form = "grant_type=refresh_token&refresh_token=\(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)"
        return try await http.send(
            .POST, "/v1/token?key=\(Self.key)", body: Data(form.utf8), headers: [("Content-Type", "application/x-www-form-urlencoded")]
        )
    }
}

/// The tokens of one signed-in session.
struct Session: Sendable {
    var localID: String
    var idToken: String
    var refreshToken: String

    init(_ fields: [String: String]) {
        localID = fields["localId"] ?? ""
        idToken = fields["idToken"] ?? ""
        refreshToken = fields["refreshToken"] ?? ""
    }

    init(_ reply: TestHTTPClient.Reply) {
        localID = reply.string("localId") ?? reply.string("user_id") ?? ""
        idToken = reply.string("idToken") ?? reply.string("id_token") ?? ""
        refreshToken = reply.string("refreshToken") ?? reply.string("refresh_token") ?? ""
    }

    /// The ID token's payload, decoded without verification (tests verify separately).
    var claims: [String: Any] {
        // A failed call leaves no token: answer no claims (the test's expectations then fail) rather than trap.
        let parts = idToken.split(separator: ".")
        guard parts.count == 3 else { return [:] }
        let part = parts[1]
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return (try? JSONSerialization.jsonObject(with: Data(base64Encoded: base64) ?? Data())) as? [String: Any] ?? [:]
    }
}

/// Waits into the next wall-clock second ("tick" in the reference's checklist).
func tick() async throws {
    let now = Date().timeIntervalSince1970
    try await Task.sleep(for: .milliseconds(Int((now.rounded(.down) + 1 - now) * 1000) + 20))
}

/// Boots the real application on free loopback ports (public and admin) against `database` and
/// runs `body` with an HTTP client pointed at it (its `admin` at the admin listener).
func withServer<T: Sendable>(
    _ configuration: Configuration = testConfiguration(),
    database: DatabaseURL,
    clock: any WallClock = SystemClock(),
    onRoutes: @Sendable (APIRoutes) -> Void = { _ in },
    _ body: @escaping @Sendable (TestHTTPClient) async throws -> T
) async throws -> T {
    let adminPort = AsyncStream.makeStream(of: Int.self)
    let startupFailure = AsyncStream.makeStream(of: String.self)
    let app = try await buildApplication(
        configuration, databaseURL: database, logger: TestDatabase.logger, clock: clock,
        onAdminListening: { port in
            adminPort.continuation.yield(port)
            adminPort.continuation.finish()
        },
        onStartupFailure: { error in
            startupFailure.continuation.yield("\(error)")
            startupFailure.continuation.finish()
        }, onRoutes: onRoutes)
    // HummingbirdTesting's live framework waits for ever for the port of a server whose start-up
    // failed, which would hang the whole suite. The run races the start-up's failure instead: that
    // fails the test with its cause, and the stuck wait is left behind.
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let pending = Mutex<CheckedContinuation<T, any Error>?>(continuation)
        let resume: @Sendable (Result<T, any Error>) -> Void = { result in pending.withLock { $0.take() }?.resume(with: result) }
        Task {
            var failures = startupFailure.stream.makeAsyncIterator()
            if let failure = await failures.next() { resume(.failure(TestDatabaseError("the server did not start: \(failure)"))) }
        }
        Task {
            defer { startupFailure.continuation.finish() }
            do {
                let value = try await app.test(.live) { client in
                    // The admin listener is a service of the application: it may bind just after the public one.
                    // Should it never bind, the test fails saying so instead of waiting for ever (a backstop,
                    // not a timing: it binds within milliseconds).
                    let admin = try await withThrowingTaskGroup(of: Int?.self) { group in
                        group.addTask {
                            var ports = adminPort.stream.makeAsyncIterator()
                            return await ports.next()
                        }
                        group.addTask {
                            try await Task.sleep(for: .seconds(300))
                            return nil
                        }
                        let first = try await group.next() ?? nil
                        group.cancelAll()
                        return first
                    }
                    guard let admin else { throw TestDatabaseError("the admin listener did not start") }
                    return try await body(TestHTTPClient(port: client.port!, adminPort: admin))
                }
                resume(.success(value))
            } catch {
                resume(.failure(error))
            }
        }
    }
}

/// Runs `request` while a transaction holds the row of user `localID`, waits until the request is
/// blocked on that row (it has read and decided, and is writing), runs `change` in the transaction
/// and commits; returns the request's answer. For optimistic writes that must notice the change.
/// With `answeredFirst`, the lock is held until the request has answered (a timeout's answer),
/// and only then is `change` run and committed.
func whileUserLocked(
    _ localID: String, in database: DatabaseURL, run request: @escaping @Sendable () async throws -> TestHTTPClient.Reply,
    thenCommit change: String = "SELECT 1", answeredFirst: Bool = false
) async throws -> TestHTTPClient.Reply {
    try await TestDatabase.withClient(database) { client in
        let (pending, answer) = try await client.withTransaction(logger: TestDatabase.logger) { connection in
            try await connection.query("SELECT 1 FROM users WHERE local_id = \(localID) FOR UPDATE", logger: TestDatabase.logger)
            let pending = Task { try await request() }
            var waiting = 0
            // Until the request is blocked on the row: at once on an idle machine; a loaded one may
            // take seconds to get it that far, so the wait is bounded only as a backstop.
            for _ in 0..<1200 where waiting == 0 {
                try await Task.sleep(for: .milliseconds(50))
                for count in try await client.query(
                    "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
                    logger: TestDatabase.logger
                ).decode(Int.self) { waiting = count }
            }
            #expect(waiting == 1, "the request never waited on the user's row")
            let answer = answeredFirst ? try await pending.value : nil
            try await connection.query(PostgresQuery(unsafeSQL: change, binds: PostgresBindings()), logger: TestDatabase.logger)
            return (pending, answer)
        }
        if let answer { return answer }
        return try await pending.value
    }
}
