import AccountPostgres
import AccountTesting
import Foundation
import Glibc
import Testing

/// The built `accountd` binary serving a production configuration (a project id without `demo-`,
/// explicit API key, admin token and key-encryption key, webhook mail) on a loopback port, as an
/// operator runs it: a process of its own, so its memory and its connections can be measured.
final class RunningServer: Sendable {
    static let apiKey = "prod-api-key"
    static let adminToken = "prod-admin-token-0123456789"
    static let project = "acme-prod"

    let process: ChildProcess
    let port: Int
    let adminPort: Int
    let http: TestHTTPClient

    static var binary: URL {
        TestDatabase.migrationsDirectory.deletingLastPathComponent().appendingPathComponent(".build/debug/accountd")
    }

    /// Starts the server on `database` (nil: its own local cluster in `ACCOUNTD_DATA_DIR`) with
    /// `environment` added, and waits until `/readyz` says 200.
    /// Starts the built server; with `logFile`, its log (stderr) is written there.
    init(database: DatabaseURL?, environment extra: [String: String] = [:], logFile: String? = nil) async throws {
        port = try Self.freePort()
        adminPort = try Self.freePort()
        let arguments =
            ["serve", "--port", String(port), "--admin-port", String(adminPort)] + (database.map { ["--database-url", $0.string] } ?? [])
        var environment = [
            "PATH": "/usr/bin:/bin",
            "ACCOUNTD_PROJECT_ID": Self.project,
            "ACCOUNTD_API_KEYS": Self.apiKey,
            "ACCOUNTD_ADMIN_TOKENS": "ops:\(Self.adminToken)",
            "ACCOUNTD_KEY_ENCRYPTION_KEY": Data(repeating: 9, count: 32).base64EncodedString(),
            "ACCOUNTD_MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path,
            // Real mail: a webhook nobody answers (the outbox keeps retrying; nothing here waits on it).
            "ACCOUNTD_MAIL_TRANSPORT": "webhook",
            "ACCOUNTD_WEBHOOK_URL": "http://127.0.0.1:9/mail",
            "ACCOUNTD_WEBHOOK_SECRET": "webhook-secret-0123456789",
            "ACCOUNTD_ARGON2_MEMORY_KIB": "1024",
            "ACCOUNTD_ARGON2_ITERATIONS": "1",
            "ACCOUNTD_DB_MAX_CONNECTIONS": "4",
            "LOG_LEVEL": "error",
        ]
        environment.merge(extra) { $1 }
        let process = try ChildProcess(Self.binary.path, arguments, environment: environment, errors: logFile)
        self.process = process
        http = TestHTTPClient(port: port, adminPort: adminPort)
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let reply = try? await http.get("/readyz"), reply.status == 200,
                let admin = try? await http.admin.get("/readyz"), admin.status == 200
            {
                break
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                process.terminate()
                throw TestDatabaseError("accountd did not become ready on port \(port)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Asks the server to shut down (SIGTERM, as an orchestrator does) and waits until it has,
    /// polling rather than blocking a thread.
    func stop() async throws {
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
    }

    deinit {
        // Killed, not awaited: a deinit that waited would block a thread of the cooperative pool
        // the suite's in-process servers answer on.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The process's resident memory now and at its peak (`VmRSS`, `VmHWM`), in KiB.
    func memoryKiB() throws -> (current: Int, peak: Int) {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        func value(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (value("VmRSS"), value("VmHWM"))
    }

    /// A free loopback port (bound to 0, read back, released); `outsideEphemeralRange`: one below
    /// Linux's ephemeral range (32768–60999), which no bind to port 0 can be given.
    static func freePort(outsideEphemeralRange: Bool = false) throws -> Int {
        if outsideEphemeralRange {
            for _ in 0..<200 {
                let candidate = Int.random(in: 20000..<32000)
                if (try? bindLoopback(port: candidate)) != nil { return candidate }
            }
            throw TestDatabaseError("no free port below the ephemeral range")
        }
        return try bindLoopback(port: 0)
    }

    /// Binds `port` on loopback (0: any), and returns the port bound before releasing it.
    private static func bindLoopback(port: Int) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestDatabaseError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestDatabaseError("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestDatabaseError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A raw TCP connection to a loopback port, for clients that misbehave below HTTP.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestDatabaseError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestDatabaseError("connect() failed")
        }
    }

    deinit { close(fd) }

    /// Sends `bytes`; false when the peer has closed the connection.
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Everything the peer sends until it closes, or until `limit` passes; whether it closed.
    func readUntilClosed(limit: Duration) async throws -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += buffer[0..<count]
                continue
            }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return (received, true) }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (received, false)
    }

    /// Whether the peer has closed its side (a read that finds the end of the stream or an error).
    func peerClosed() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }  // an answer before the close: read past it
            if count == 0 { return true }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }

    /// Sends `bytes` one at a time, `gap` apart, until the peer closes; whether it closed before
    /// the last byte went out.
    func cutOffWhileSending(_ bytes: [UInt8], gap: Duration) async throws -> Bool {
        for byte in bytes {
            if peerClosed() || !send([byte]) { return true }
            try await Task.sleep(for: gap)
        }
        return false
    }

    /// Sends `bytes` one at a time, `gap` apart, until the peer closes; the time that took, or nil
    /// when every byte went out and the peer still had not closed `linger` after the last.
    func trickle(_ bytes: [UInt8], gap: Duration, linger: Duration) async throws -> Duration? {
        let started = ContinuousClock.now
        if try await cutOffWhileSending(bytes, gap: gap) { return ContinuousClock.now - started }
        let deadline = ContinuousClock.now + linger
        while ContinuousClock.now < deadline {
            if peerClosed() { return ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
