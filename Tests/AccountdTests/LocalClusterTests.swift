import AccountTesting
import Foundation
import Glibc
import Testing

/// `accountd serve` without a `DATABASE_URL` runs its own PostgreSQL: reachable through a Unix
/// socket in its data directory only, so no other local user reaches its trust-authenticated
/// superuser, and two checkouts run side by side.
@Suite("The local cluster")
struct LocalClusterTests {
    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    @Test("two servers with their own data directories both start; their clusters listen on no TCP port, only on a socket in pgdata")
    func socketOnly() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-local-\(UUID().uuidString)")
        // A folder the postgres user can enter (else the cluster would move to /var/lib/accountd).
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
        func environment(_ name: String) -> [String: String] {
            ["ACCOUNTD_DATA_DIR": root.appendingPathComponent(name).path, "ACCOUNTD_MIGRATE": "1"]
        }
        let first = try await RunningServer(database: nil, environment: environment("a"))
        let second = try await RunningServer(database: nil, environment: environment("b"))
        for (server, name) in [(first, "a"), (second, "b")] {
            let socket = root.appendingPathComponent("\(name)/pgdata/.s.PGSQL.54329").path
            #expect(FileManager.default.fileExists(atPath: socket), "the cluster's socket is in its data directory")
            let signUp = try await server.http.post(
                "/v1/accounts:signUp?key=\(RunningServer.apiKey)", ["email": "a@example.com", "password": "secret-pass"])
            #expect(signUp.status == 200, "each server works on its own cluster")
        }
        #expect(!Self.listening(54329), "no cluster listens on TCP")
        try await first.stop()
        try await second.stop()
        #expect(
            !FileManager.default.fileExists(atPath: root.appendingPathComponent("a/pgdata/.s.PGSQL.54329").path), "stopped with the server")
    }
}
