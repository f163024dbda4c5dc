import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `accountctl sessions list|revoke`
struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List and revoke sessions.", subcommands: [List.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A user's sessions, newest first.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        @Flag(name: .customLong("include-revoked"), help: "Show revoked sessions too.") var includeRevoked = false

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let uid = try await client.findUser(user)["localId"] as? String ?? ""
                let reply = try await client.call("listSessions", ["localId": uid, "includeRevoked": includeRevoked, "maxResults": 1000])
                let sessions = reply["sessions"] as? [[String: Any]] ?? []
                if connection.json { return Output.json(reply) }
                Output.table(
                    ["session", "method", "created", "last refresh", "ip", "revoked"],
                    sessions.map {
                        [
                            $0["sessionId"] as? String ?? "", $0["signInMethod"] as? String ?? "", Output.time($0["createdAt"]),
                            Output.time($0["lastRefreshAt"]), $0["ipAddress"] as? String ?? "-", $0["revokeReason"] as? String ?? "-",
                        ]
                    }
                )
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke one session.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "session id") var sessionID: String
        @Option(help: "The session's user (uid, email or +phone); found from the session when omitted.") var user: String?

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let uid: String
                if let user {
                    uid = try await client.findUser(user)["localId"] as? String ?? ""
                } else {
                    uid = try await client.call("getSession", ["sessionId": sessionID])["localId"] as? String ?? ""
                }
                let reply = try await client.call("revokeSessions", ["localId": uid, "sessionIds": [sessionID]])
                if connection.json { return Output.json(reply) }
                let newly = (reply["revokedSessionIds"] as? [String] ?? []).contains(sessionID)
                Output.say(newly ? "revoked session \(sessionID) of \(uid)" : "session \(sessionID) was already revoked")
            }
        }
    }
}

/// `accountctl links reset|verify|sign-in EMAIL`
struct Links: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an email action link.", subcommands: [Reset.self, Verify.self, SignIn.self])

    struct Options: ParsableArguments {
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "email") var email: String
        @Option(name: .customLong("continue-url"), help: "Where the user lands afterwards.") var continueURL: String?
    }

    static func link(_ options: Options, _ type: String, inApp: Bool = false) async throws {
        try await runCommand {
            var body: [String: Any] = ["requestType": type, "email": options.email, "returnOobLink": true]
            if let url = options.continueURL { body["continueUrl"] = url }
            if inApp { body["canHandleCodeInApp"] = true }
            let reply = try await options.connection.client().call("sendOobCode", body)
            if options.connection.json { return Output.json(reply) }
            Output.say(reply["oobLink"] as? String ?? "")
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A password reset link.")
        @OptionGroup var options: Options
        func run() async throws { try await Links.link(options, "PASSWORD_RESET") }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An email verification link.")
        @OptionGroup var options: Options
        func run() async throws { try await Links.link(options, "VERIFY_EMAIL") }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-in", abstract: "An email sign-in link (needs --continue-url).")
        @OptionGroup var options: Options
        func run() async throws {
            guard options.continueURL != nil else { throw ValidationError("sign-in links need --continue-url") }
            try await Links.link(options, "EMAIL_SIGNIN", inApp: true)
        }
    }
}

/// `accountctl keys list|rotate`
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Token signing keys.", subcommands: [List.self, Rotate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Published keys and their states.")
        @OptionGroup var connection: ConnectionOptions
        func run() async throws {
            try await runCommand {
                let reply = try await connection.client().call("listSigningKeys")
                if connection.json { return Output.json(reply) }
                Output.table(
                    ["kid", "state", "created", "activated", "retired", "unpublished after"],
                    (reply["keys"] as? [[String: Any]] ?? []).map {
                        [
                            $0["kid"] as? String ?? "", $0["state"] as? String ?? "", Output.time($0["createdAt"]),
                            Output.time($0["activatedAt"]),
                            Output.time($0["retiredAt"]), Output.time($0["removeAfter"]),
                        ]
                    }
                )
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a new key; it signs after an hour (when verifiers have fetched it), or at once with --now."
        )
        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Sign with the new key immediately (emergency).") var now = false
        func run() async throws {
            try await runCommand {
                let reply = try await connection.client().call("rotateSigningKeys", ["immediately": now])
                if connection.json { return Output.json(reply) }
                Output.say("new key \(reply["kid"] as? String ?? "") \(now ? "signs now" : "published; it signs within the hour")")
            }
        }
    }
}

/// `accountctl audit USER`
struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A user's audit trail, newest first.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "uid, email or +phone") var user: String
    @Option(help: "At most this many events.") var limit = 100

    func run() async throws {
        try await runCommand {
            let client = try connection.client()
            let uid: String
            do {
                uid = try await client.findUser(user)["localId"] as? String ?? ""
            } catch let error as CLIError where error.exitCode == 66 && !user.contains("@") && !user.hasPrefix("+") {
                uid = user  // a deleted user's trail remains
            }
            let reply = try await client.call("listAuditEvents", ["localId": uid, "maxResults": limit])
            if connection.json { return Output.json(reply) }
            Output.table(
                ["when", "actor", "action", "details"],
                (reply["events"] as? [[String: Any]] ?? []).map {
                    [
                        Output.time($0["occurredAt"]), "\($0["actorType"] as? String ?? ""):\($0["actor"] as? String ?? "")",
                        $0["action"] as? String ?? "", $0["details"] as? String ?? "",
                    ]
                }
            )
        }
    }
}

/// `accountctl health`: is the server up and ready? (No token needed.)
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check that accountd is up and its database ready.")
    @Option(help: "Base URL of either listener (ACCOUNTD_ADMIN_URL, default \(defaultAdminURL)); both answer /healthz and /readyz.")
    var url: String?

    func run() async throws {
        let base = url ?? ProcessInfo.processInfo.environment["ACCOUNTD_ADMIN_URL"] ?? defaultAdminURL
        for path in ["/healthz", "/readyz"] {
            let response: HTTPClientResponse
            do {
                response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(3))
            } catch {
                FileHandle.standardError.write(Data("accountctl: accountd at \(base) is unreachable: \(error)\n".utf8))
                throw ExitCode(69)
            }
            let body = try await response.body.collect(upTo: 64 * 1024)
            Output.say("\(path): \(response.status.code) \(String(buffer: body))")
            if response.status != .ok { throw ExitCode(75) }
        }
    }
}

/// `accountctl status`: what an on-call person checks first, from the admin listener's `/readyz`
/// and `/metrics` (no token needed: the admin listener binds to loopback unless told otherwise).
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Readiness, version and the first figures to check.")
    @Option(help: "Base URL of the admin listener (ACCOUNTD_ADMIN_URL, default \(defaultAdminURL)).")
    var url: String?
    @Flag(help: "Print JSON instead of lines.")
    var json = false

    func run() async throws {
        let base = (url ?? ProcessInfo.processInfo.environment["ACCOUNTD_ADMIN_URL"] ?? defaultAdminURL)
            .trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        func fetch(_ path: String) async throws -> (Int, String) {
            do {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(5))
                let body = try await response.body.collect(upTo: 8 << 20)
                return (Int(response.status.code), String(buffer: body))
            } catch {
                FileHandle.standardError.write(Data("accountctl: accountd at \(base) is unreachable: \(error)\n".utf8))
                throw ExitCode(69)
            }
        }
        let (readyStatus, readyBody) = try await fetch("/readyz")
        let (metricsStatus, metricsBody) = try await fetch("/metrics")
        guard metricsStatus == 200 else {
            FileHandle.standardError.write(
                Data("accountctl: \(base)/metrics answered \(metricsStatus); is this the admin listener?\n".utf8))
            throw ExitCode(69)
        }
        let figures = StatusFigures(exposition: metricsBody)
        let ready = readyStatus == 200
        let reason = ((try? JSONSerialization.jsonObject(with: Data(readyBody.utf8))) as? [String: Any])
            .flatMap { ($0["error"] as? [String: Any])?["message"] as? String }
        let summary = figures.summary(ready: ready, reason: reason)
        if json {
            Output.json(summary)
        } else {
            for (key, value) in summary.sorted(by: { $0.key < $1.key }) { Output.say("\(key): \(value)") }
        }
        if !ready { throw ExitCode(75) }
    }
}

/// The figures `accountctl status` prints, read from a Prometheus text exposition.
struct StatusFigures {
    private var samples: [(name: String, labels: String, value: Double)] = []

    init(exposition: String) {
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let brace = series.firstIndex(of: "{") ?? series.endIndex
            samples.append((String(series[..<brace]), String(series[brace...]), value))
        }
    }

    /// The sum of `name`'s samples whose label text contains every one of `labels` (`key="value"`).
    func sum(_ name: String, _ labels: [String] = []) -> Double {
        samples.filter { $0.name == name && labels.allSatisfy($0.labels.contains) }.reduce(0) { $0 + $1.value }
    }

    /// The label text of `name`'s first sample.
    func labels(_ name: String) -> String? { samples.first { $0.name == name }?.labels }

    func summary(ready: Bool, reason: String?) -> [String: String] {
        let requests = sum("accountd_http_requests_total")
        let failed = samples.filter { $0.name == "accountd_http_requests_total" && $0.labels.contains("status=\"5") }
            .reduce(0) { $0 + $1.value }
        let version = labels("accountd_build_info").flatMap { $0.split(separator: "\"").dropFirst().first.map(String.init) } ?? "?"
        func whole(_ value: Double) -> String { String(Int(value.rounded())) }
        return [
            "ready": ready ? "yes" : "no" + (reason.map { " (\($0))" } ?? ""),
            "version": version,
            "uptime": "\(whole(sum("accountd_uptime_seconds"))) s",
            "database": sum("accountd_db_up") == 1 ? "up" : "DOWN",
            "pool": "\(whole(sum("accountd_db_pool_connections", ["state=\"leased\""]))) leased, "
                + "\(whole(sum("accountd_db_pool_connections", ["state=\"idle\""]))) idle of \(whole(sum("accountd_db_pool_max_connections"))), "
                + "\(whole(sum("accountd_db_pool_waiters"))) waiting",
            "requests": "\(whole(requests)) since start, \(whole(failed)) answered 5xx"
                + (requests > 0 ? String(format: " (%.3f%%)", failed / requests * 100) : ""),
            "timeouts": "\(whole(sum("accountd_http_timeouts_total"))) (request deadline and HTTP timeout)",
            "outbox": "mail \(whole(sum("accountd_outbox_depth", ["queue=\"mail\""]))) waiting "
                + "(oldest \(whole(sum("accountd_outbox_oldest_age_seconds", ["queue=\"mail\""]))) s), "
                + "sms \(whole(sum("accountd_outbox_depth", ["queue=\"sms\""]))) waiting "
                + "(oldest \(whole(sum("accountd_outbox_oldest_age_seconds", ["queue=\"sms\""]))) s)",
            "limits": "\(whole(sum("accountd_limit_refusals_total"))) refusals, \(whole(sum("accountd_lockouts_started_total"))) lockouts",
            "revocation listener": sum("accountd_revocation_listener_up") == 1 ? "listening" : "NOT LISTENING (caches off)",
            "password hashing": "\(whole(sum("accountd_hash_queue_depth"))) queued or running, "
                + "\(whole(sum("accountd_hash_queue_refusals_total"))) refused",
        ]
    }
}
