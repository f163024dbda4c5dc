import AccountPostgres
import AccountTesting
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import accountd

/// Issue 19, "Crashes and unbounded work": each point over real HTTP, most against the built
/// binary in a production configuration (``RunningServer``).
@Suite("Crash and unbounded-work paths")
struct HardeningTests {
    static let clientRPC = "/v1/accounts:%@?key=\(RunningServer.apiKey)"

    static func client(_ rpc: String) -> String { String(format: clientRPC, rpc) }

    @Test("point 1: a dozen concurrent 15 MiB bodies to batchCreate with an API key are refused unread; memory stays flat")
    func bodiesAfterTheCallerCheck() async throws {
        let server = try await RunningServer(database: try await TestDatabase.createMigrated())
        // A warm-up request of each kind, so the baseline includes the server's working set.
        _ = try await server.http.post(Self.client("signUp"), ["email": "warm@example.com", "password": "secret-pass"])
        let before = try server.memoryKiB()
        let users = String(repeating: "{\"localId\":\"u\",\"email\":\"x@example.com\"},", count: 15 << 20 / 40)
        let body = Data("{\"users\":[\(users.dropLast())]}".utf8)
        #expect(body.count > 14 << 20 && body.count < 16 << 20)
        // The uploads run on an event loop of their own, so the suite's other servers and clients,
        // which share the singleton loops, are not starved while 180 MiB cross loopback.
        let uploadLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let uploader = HTTPClient(eventLoopGroupProvider: .shared(uploadLoop))
        let uploads = TestHTTPClient(port: server.port, client: uploader)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await uploads.send(.POST, Self.client("batchCreate"), body: body, headers: [("Content-Type", "application/json")])
                        .status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try await uploader.shutdown()
        try await uploadLoop.shutdownGracefully()
        #expect(statuses.count == 12)
        #expect(statuses.allSatisfy { (400..<500).contains($0) }, "\(statuses)")
        let after = try server.memoryKiB()
        // Buffering the bodies alone would take 180 MiB; parsing them, gigabytes.
        #expect(after.peak - before.current < 48 << 10, "peak grew by \(after.peak - before.current) KiB")
        // A client's body is capped at 1 MiB on every route; an admin's batchCreate still takes 15 MiB.
        let big = try await server.http.send(
            .POST, Self.client("signUp"), body: Data(count: 2 << 20), headers: [("Content-Type", "application/json")])
        #expect(big.status == 413)
        let adminBody = Data("{\"users\":[\(users.prefix(40 * 52_000).dropLast())]}".utf8)
        let admin = try await server.http.admin.send(
            .POST, "/v1/projects/\(RunningServer.project)/accounts:batchCreate", body: adminBody,
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(RunningServer.adminToken)")])
        // Read and parsed (2 MiB is over a client's limit), then refused for its size in users.
        #expect(admin.status == 400, "\(String(decoding: admin.body.prefix(200), as: UTF8.self))")
        #expect(admin.errorCode == "MAXIMUM_USER_COUNT_EXCEEDED")
        #expect(server.process.isRunning)
    }

    @Test("point 2: JSON nesting is bounded far below the stack: deep bodies are INVALID_ARGUMENT, never a crash")
    func nestingBounded() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http, project: "acme-prod")
            for depth in [40, 100_000] {
                let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                let body = Data("{\"email\":\"deep\(depth)@example.com\",\"password\":\"secret-pass\",\"extra\":\(nested)}".utf8)
                let reply = try await http.send(.POST, "/v1/accounts:signUp?key=\(API.key)", body: body)
                #expect(reply.status == 400, "depth \(depth)")
                #expect((reply.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
            }
            // What SDKs send (4 levels at most) still goes through.
            #expect(
                try await api.client("signUp", ["email": "flat@example.com", "password": "secret-pass", "extra": [[["ok"]]]]).status == 200)
        }
    }

    @Test("point 3: field limits as production counts them; a NUL anywhere is a 400, never PostgreSQL's 22021 as a 500")
    func fieldLimits() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(productionConfiguration(), database: database) { http in
            let api = API(http: http, project: "acme-prod")
            let alice = try await api.signUp("alice@example.com")
            func update(_ fields: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
                try await api.client("update", fields.merging(["idToken": alice.idToken]) { $1 })
            }
            // 128 emoji are 256 UTF-16 units: the most a display name holds; one more is too long.
            #expect(try await update(["displayName": String(repeating: "😀", count: 128)]).status == 200)
            #expect(
                try await update(["displayName": String(repeating: "😀", count: 128) + "a"]).errorMessage
                    == "INVALID_PROFILE_ATTRIBUTE : Display name too long.")
            #expect(try await update(["photoUrl": "https://example.com/" + String(repeating: "p", count: 2028)]).status == 200)
            #expect(
                try await update(["photoUrl": "https://example.com/" + String(repeating: "p", count: 2029)]).errorMessage
                    == "INVALID_PROFILE_ATTRIBUTE : Photo URL too long.")
            for control in ["\u{0}", "\u{1b}[2J", "\u{9b}"] {
                let reply = try await update(["displayName": "Eve\(control)"])
                #expect(reply.status == 400)
                #expect(reply.errorCode == "INVALID_PROFILE_ATTRIBUTE")
            }
            #expect(
                try await api.client("signUp", ["email": "nul@example.com", "password": "secret-pass", "displayName": "a\u{0}b"]).status
                    == 400)
            // Passwords are counted in UTF-16 units, as the SDKs count them: three emoji are six.
            #expect(
                try await api.client("signUp", ["email": "emoji@example.com", "password": "😀😀😀", "returnSecureToken": true]).status == 200)
            #expect(try await api.client("signUp", ["email": "short@example.com", "password": "😀😀a"]).errorCode == "WEAK_PASSWORD")
            // Claims: 1,000 bytes at most.
            let claims = "{\"k\":\"" + String(repeating: "x", count: 992) + "\"}"
            #expect(try await api.admin("update", ["localId": alice.localID, "customAttributes": claims]).status == 200)
            #expect(
                try await api.admin("update", ["localId": alice.localID, "customAttributes": claims + " "]).errorCode == "CLAIMS_TOO_LARGE")
            // A NUL in a field no rule names still reaches PostgreSQL no further than a 400.
            let nulSettings = try await api.client(
                "sendOobCode",
                [
                    "requestType": "PASSWORD_RESET", "email": "alice@example.com", "continueUrl": "https://app.example.com/x",
                    "canHandleCodeInApp": true, "iOSBundleId": "com.example\u{0}app",
                ])
            #expect(nulSettings.status == 400, "\(String(decoding: nulSettings.body, as: UTF8.self))")
            // An import refuses the record, not the request.
            let imported = try await api.admin(
                "batchCreate",
                [
                    "users": [
                        ["localId": "nul-user", "email": "n@example.com", "displayName": "x\u{0}"],
                        ["localId": "fine", "email": "f@example.com"],
                    ]
                ])
            #expect(imported.status == 200)
            #expect((imported.json["error"] as? [[String: Any]])?.map { $0["index"] as? Int } == [0])
        }
    }

    @Test("point 5: a request head or body that trickles in is cut off at the configured deadline; a steady client is not")
    func slowClientsAreCutOff() async throws {
        let server = try await RunningServer(
            database: try await TestDatabase.createMigrated(),
            environment: [
                "ACCOUNTD_HTTP_IDLE_TIMEOUT_SECONDS": "3", "ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS": "2",
                "ACCOUNTD_REQUEST_DEADLINE_SECONDS": "1",
            ])
        // A head that never ends, a byte every 200 ms: the idle timeout (nothing decoded) closes it.
        let head = try RawConnection(port: server.port)
        let slowHead = Array("POST \(Self.client("signUp")) HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 100))".utf8)
        let headClosed = try await head.trickle(slowHead, gap: .milliseconds(200), linger: .seconds(20))
        #expect(headClosed != nil, "a head that never ends holds its connection")
        // A whole head, then a body a byte every 200 ms: each part resets the idle timer, the request deadline closes it.
        let body = try RawConnection(port: server.port)
        #expect(
            body.send(
                Array(
                    "POST \(Self.client("signUp")) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 150\r\n\r\n"
                        .utf8)))
        let bodyClosed = try await body.trickle(
            Array(repeating: UInt8(ascii: " "), count: 150), gap: .milliseconds(200), linger: .seconds(20))
        #expect(bodyClosed != nil, "a body that trickles holds its connection")
        // A caller refused before its body is read (a wrong API key) is answered at once; the
        // body it then trickles is still cut off at the deadline.
        let refused = try RawConnection(port: server.port)
        #expect(
            refused.send(
                Array(
                    "POST /v1/accounts:signUp?key=wrong HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 150\r\n\r\n"
                        .utf8)))
        // (Without the deadline it would hold the connection until its body is whole.)
        #expect(
            try await refused.cutOffWhileSending(Array(repeating: UInt8(ascii: " "), count: 150), gap: .milliseconds(200)),
            "a refused caller's trickling body holds its connection")
        // The server still answers everyone else.
        #expect(try await server.http.get("/healthz").status == 200)
    }

    @Test("point 6: form-encoded and multipart bodies are refused on every RPC; the token route still takes the JS SDK's form")
    func formBodiesRefused() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(productionConfiguration(), database: database) { http in
            let api = API(http: http, project: "acme-prod")
            for (type, body) in [
                ("application/x-www-form-urlencoded", "email=csrf%40example.com&password=secret-pass"),
                (
                    "multipart/form-data; boundary=b",
                    "--b\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\ncsrf@example.com\r\n--b--\r\n"
                ),
            ] {
                for rpc in ["signUp", "sendOobCode", "signInWithPassword"] {
                    let reply = try await http.send(
                        .POST, "/v1/accounts:\(rpc)?key=\(API.key)", body: Data(body.utf8), headers: [("Content-Type", type)])
                    #expect(reply.status == 400, "\(rpc) \(type)")
                    #expect((reply.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
                }
            }
            #expect(try await TakeoverTests.count("SELECT count(*)::int FROM users", database) == 0)
            let alice = try await api.signUp("alice@example.com")
            #expect(try await api.refresh(alice.refreshToken).status == 200)
        }
    }

    @Test("point 7: production's answers to bad input: empty continueUrl, unknown deleteAttribute, non-base64 hash, empty admin lookup")
    func productionAnswers() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(productionConfiguration(), database: database) { http in
            let api = API(http: http, project: "acme-prod")
            let alice = try await api.signUp("alice@example.com")
            #expect(
                try await api.client("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "alice@example.com", "continueUrl": ""])
                    .errorCode == "INVALID_CONTINUE_URI")
            let unknown = try await api.client("update", ["idToken": alice.idToken, "deleteAttribute": ["DISPLAY_NAME", "NICKNAME"]])
            #expect(unknown.status == 400)
            #expect((unknown.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
            #expect(unknown.errorMessage?.contains("delete_attribute[1]") == true)
            #expect(
                try await api.client("update", ["idToken": alice.idToken, "deleteAttribute": ["EMAIL"]]).errorCode == "INVALID_ARGUMENT")
            #expect(try await api.client("update", ["idToken": alice.idToken, "deleteAttribute": ["DISPLAY_NAME"]]).status == 200)
            let imported = try await api.admin(
                "batchCreate",
                [
                    "hashAlgorithm": "HMAC_SHA256", "signerKey": "a2V5",
                    "users": [
                        ["localId": "bad-hash", "email": "bad@example.com", "passwordHash": "not base64 !!"],
                        ["localId": "no-hash", "email": "nohash@example.com"],
                    ],
                ])
            #expect(imported.status == 200)
            let errors = imported.json["error"] as? [[String: Any]] ?? []
            #expect(errors.map { $0["index"] as? Int } == [0])
            #expect((errors.first?["message"] as? String)?.contains("passwordHash") == true)
            #expect((try await api.admin("lookup", ["localId": ["bad-hash"]]).json["users"]) == nil, "the record is not imported")
            #expect(try await api.admin("lookup", [:]).errorCode == "MISSING_ID_TOKEN")
            #expect(try await api.admin("lookup", ["localId": [String]()]).errorCode == "MISSING_ID_TOKEN")
            #expect(try await api.admin("lookup", ["localId": ["nobody"]]).json["users"] == nil)
        }
    }

    @Test("point 9: accountctl prints server data with terminal control characters escaped, in tables and in JSON")
    func accountctlEscapes() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let eve = try await api.signUp("eve@example.com")
            // Data written before today's validation, or by another tool, can hold anything.
            try await TestDatabase.execute(
                "UPDATE users SET display_name = E'Eve\\x1b[2J\\x1b]0;pwned\\x07' || chr(155) || '31m' WHERE local_id = '\(eve.localID)'",
                on: database)
            for json in [false, true] {
                let run = try await AccountctlTests.run(["users", "get", "eve@example.com"] + (json ? ["--json"] : []), url: http.baseURL)
                #expect(run.status == 0, "\(run.errors)")
                #expect(!run.output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B }, "\(run.output)")
                #expect(run.output.contains("Eve"))
                if json {
                    let parsed = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
                    #expect(
                        (parsed?["displayName"] as? String)?.unicodeScalars.map(\.value).contains(0x9B) == true, "JSON still means the same"
                    )
                }
            }
        }
    }
}
