import AccountAPI
import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import accountd

/// What an operator reads (issue 35): `/metrics` on the admin listener after each kind of request,
/// JSON log lines, and the W3C trace context carried from a request into its log lines and into
/// the mail and SMS webhooks. Production configuration (`acme-prod`, webhook mail and SMS, limits on).
@Suite(.serialized)
struct ObservabilityTests {
    /// One parsed exposition: each family's `# TYPE`, and its samples.
    struct Exposition {
        var types: [String: String] = [:]
        var help: [String: String] = [:]
        var samples: [(name: String, labels: [String: String], value: Double)] = []

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("# TYPE ") {
                    let parts = line.split(separator: " ")
                    if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                } else if line.hasPrefix("# HELP ") {
                    let parts = line.split(separator: " ", maxSplits: 3)
                    if parts.count == 4 { help[String(parts[2])] = String(parts[3]) }
                } else if !line.hasPrefix("#"), let space = line.lastIndex(of: " ") {
                    let series = line[..<space]
                    let value = Double(line[line.index(after: space)...]) ?? .nan
                    var labels: [String: String] = [:]
                    var name = String(series)
                    if let brace = series.firstIndex(of: "{") {
                        name = String(series[..<brace])
                        let inner = series[series.index(after: brace)..<(series.lastIndex(of: "}") ?? series.endIndex)]
                        // Values never contain `",` here: they are bounded sets (names, codes, numbers).
                        for pair in inner.split(separator: "\",") {
                            let kv = pair.split(separator: "=", maxSplits: 1)
                            if kv.count == 2 { labels[String(kv[0])] = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                        }
                    }
                    samples.append((name, labels, value))
                }
            }
        }

        /// The sum of `name`'s samples whose labels include `labels`.
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
            samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
                .reduce(0) { $0 + $1.value }
        }
    }

    static func scrape(_ http: TestHTTPClient) async throws -> Exposition {
        let reply = try await http.admin.get("/metrics")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return Exposition(String(decoding: reply.body, as: UTF8.self))
    }

    @Test("/metrics: every family after driving each kind of request, typed, counters moved, bounded labels")
    func metricsAfterEachKindOfRequest() async throws {
        try await MFATests.run(mfa: false) { f in
            let api = f.api
            let before = try await Self.scrape(f.http)
            let alice = try await api.signUp("metrics-alice@example.com")
            #expect(
                try await api.client("signInWithPassword", ["email": "metrics-alice@example.com", "password": "wrong-one"]).status == 400)
            let signedIn = try await api.signIn("metrics-alice@example.com")
            #expect(try await api.refresh(signedIn.refreshToken).status == 200)
            #expect(try await api.client("lookup", ["idToken": signedIn.idToken]).status == 200)
            // A path no route has: counted as `unmatched`, never by its raw path.
            #expect(try await f.http.get("/v1/accounts:noSuchRoute-\(alice.localID)?key=\(API.key)").status == 404)
            #expect(try await api.admin("lookup", ["localId": [alice.localID]]).status == 200)
            // A session revoked by the admin, the mail outbox and a limiter refusal (the spacing of
            // mail to one address), and an SMS through the webhook.
            #expect(try await api.admin("revokeSessions", ["localId": alice.localID]).status == 200)
            let reset = ["requestType": "PASSWORD_RESET", "email": "metrics-alice@example.com"]
            #expect(try await api.client("sendOobCode", reset).status == 200)
            let refused = try await api.client("sendOobCode", reset)
            #expect(refused.status == 400, "\(String(decoding: refused.body, as: UTF8.self))")
            let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+15555550177"])
            #expect(sent.status == 200, "\(String(decoding: sent.body, as: UTF8.self))")
            try await waitFor("the mail and the SMS to be delivered") { f.receiver.deliveries.count >= 2 }
            // The reset link of an unverified address: the takeover rule applies.
            let link = try #require(f.receiver.deliveries.compactMap { $0.json["link"] as? String }.first)
            let oobCode = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
            let resetDone = try await api.client("resetPassword", ["oobCode": oobCode, "newPassword": "another-secret-pass"])
            #expect(resetDone.status == 200, "\(String(decoding: resetDone.body, as: UTF8.self))")
            // A delivery is counted once its row is marked sent, just after the webhook answered.
            var after = try await Self.scrape(f.http)
            try await waitFor("both deliveries to be counted") {
                after = try await Self.scrape(f.http)
                return after.value("accountd_outbox_sends_total", ["queue": "sms", "outcome": "sent"]) >= 1
                    && after.value("accountd_outbox_sends_total", ["queue": "mail", "outcome": "sent"]) >= 1
            }
            // Last, as it moves the clock past the outboxes' due times: a rotated-away refresh token
            // presented again past the grace period is reuse, and its session is revoked.
            let bob = try await api.signUp("metrics-bob@example.com")
            #expect(try await api.refresh(bob.refreshToken).status == 200)
            f.clock.advance(120)
            #expect(try await api.refresh(bob.refreshToken).status == 400)
            after = try await Self.scrape(f.http)
            // Every family the server always exports, with its type and help.
            let alwaysPresent: [MetricFamily] = [
                .httpRequests, .httpRequestDuration, .httpInFlight, .httpTimeouts, .signIns, .signUps, .sessionsCreated,
                .sessionsRevoked, .poolConnections, .poolMaxConnections, .poolWaiters, .poolWait, .connectFailures, .databaseUp,
                .statementDuration, .outboxDepth, .outboxOldestAge, .outboxAttempts, .outboxSends, .limitRefusals, .hashQueueDepth,
                .hashQueueWait, .tokenCache, .revocationListenerUp, .buildInfo, .uptime, .residentMemory, .cpuSeconds, .openFDs,
                .startTime,
            ]
            for family in alwaysPresent {
                #expect(after.types[family.rawValue] == family.kind.rawValue, "\(family.rawValue) is exported as \(family.kind)")
                #expect(after.help[family.rawValue] == family.help, "\(family.rawValue) has its help")
            }
            // Nothing exported that the catalogue does not name.
            let known = Set(MetricFamily.allCases.map(\.rawValue))
            #expect(
                after.types.keys.filter { !known.contains($0) }.isEmpty,
                "unknown families: \(after.types.keys.filter { !known.contains($0) })")
            // Counters that moved.
            func moved(
                _ name: String, _ labels: [String: String] = [:], by amount: Double = 1, sourceLocation: SourceLocation = #_sourceLocation
            ) {
                #expect(
                    after.value(name, labels) - before.value(name, labels) >= amount, "\(name) \(labels) did not move",
                    sourceLocation: sourceLocation)
            }
            moved("accountd_http_requests_total", ["listener": "public", "rpc": "signUp", "status": "200", "code": ""])
            moved("accountd_http_requests_total", ["rpc": "signInWithPassword", "status": "400", "code": "INVALID_PASSWORD"])
            moved("accountd_http_requests_total", ["rpc": "token", "status": "200"])
            moved("accountd_http_requests_total", ["listener": "admin", "rpc": "lookup", "status": "200"])
            moved("accountd_http_request_duration_seconds_count", ["rpc": "lookup"], by: 2)
            moved("accountd_http_requests_total", ["rpc": "unmatched", "status": "404", "code": "NOT_FOUND"])
            moved("accountd_sign_ins_total", ["provider": "password", "outcome": "success"])
            moved("accountd_sign_ins_total", ["provider": "password", "outcome": "INVALID_PASSWORD"])
            moved("accountd_sign_ups_total", ["provider": "password"])
            moved("accountd_sessions_created_total", ["provider": "password"], by: 2)
            moved("accountd_sessions_revoked_total", ["reason": "ALL_SESSIONS_REVOKED"], by: 2)
            moved("accountd_limit_refusals_total", ["bucket": "mail_per_address_spacing"])
            moved("accountd_refresh_token_reuse_total")
            moved("accountd_sessions_revoked_total", ["reason": "REFRESH_TOKEN_REUSE"])
            moved("accountd_takeover_protection_total", ["trigger": "password_reset"])
            moved("accountd_outbox_sends_total", ["queue": "mail", "transport": "webhook", "outcome": "sent"])
            moved("accountd_outbox_sends_total", ["queue": "sms", "transport": "webhook", "outcome": "sent"])
            moved("accountd_outbox_attempts_total", ["queue": "sms"])
            moved("accountd_db_statement_duration_seconds_count", ["statement": "UserByEmail"])
            moved("accountd_db_pool_wait_seconds_count")
            moved("accountd_hash_queue_wait_seconds_count", ["lane": "standard"])
            #expect(after.value("accountd_db_up") == 1)
            #expect(after.value("accountd_revocation_listener_up") == 1)
            #expect(after.value("accountd_db_pool_max_connections") > 0)
            #expect(after.value("process_resident_memory_bytes") > 1_000_000)
            #expect(after.value("accountd_build_info", ["version": MetricsEndpoint.version]) == 1)
            // Bounded labels: no user id, email, address or token anywhere in the exposition.
            let text = String(decoding: try await f.http.admin.get("/metrics").body, as: UTF8.self)
            for secret in [
                alice.localID, "metrics-alice", "127.0.0.1", "+1555", String(signedIn.idToken.prefix(20)),
                String(signedIn.refreshToken.prefix(20)),
            ] {
                #expect(!text.contains(secret), "the exposition carries \(secret)")
            }
            // The public listener does not serve it.
            #expect(try await f.http.get("/metrics").status == 404)
        }
    }

    @Test("traceparent: carried into the mail and SMS webhooks the request queued; a malformed one is ignored")
    func traceContextReachesWebhooks() async throws {
        try await MFATests.run(mfa: false) { f in
            let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
            let header = ("traceparent", "00-\(trace)-00f067aa0ba902b7-01")
            _ = try await f.api.signUp("traced@example.com")
            let mailed = try await f.http.post(
                "/v1/accounts:sendOobCode?key=\(API.key)", ["requestType": "PASSWORD_RESET", "email": "traced@example.com"],
                headers: [header])
            #expect(mailed.status == 200)
            let texted = try await f.http.post(
                "/v1/accounts:sendVerificationCode?key=\(API.key)", ["phoneNumber": "+15555550178"], headers: [header])
            #expect(texted.status == 200)
            try await waitFor("both deliveries") { f.receiver.deliveries.count >= 2 }
            for delivery in f.receiver.deliveries {
                let parts = delivery.traceparent.split(separator: "-")
                #expect(parts.count == 4 && parts[1] == trace, "delivery carried \(delivery.traceparent)")
                // This server's span is the parent, not the caller's.
                #expect(parts.count == 4 && parts[2] != "00f067aa0ba902b7" && parts[2].count == 16)
            }
            // A malformed traceparent (all-zero trace id) is not passed on.
            let count = f.receiver.deliveries.count
            #expect(
                try await f.http.post(
                    "/v1/accounts:sendVerificationCode?key=\(API.key)", ["phoneNumber": "+15555550179"],
                    headers: [("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01")]
                ).status == 200)
            try await waitFor("the third delivery") { f.receiver.deliveries.count > count }
            #expect(f.receiver.deliveries.last?.traceparent == "")
        }
    }

    @Test("traceparent: carried into the identity provider's key fetch of a traced sign-in")
    func traceContextReachesIdentityProvider() async throws {
        let clock = ManualClock()
        try await TestIssuer.with { issuer in
            try await withServer(FederationTests.configuration(), database: try await TestDatabase.createMigrated(), clock: clock) { http in
                try await FederationTests.configure(http, issuer, "google.com", clientID: "web-client")
                let before = issuer.traceparents.count
                let token = try issuer.token(
                    sub: "traced", audience: "web-client", issuer: "https://accounts.google.com", email: "traced@gmail.com",
                    emailVerified: true, issuedAt: clock.now())
                let trace = "a3ce929d0e0e47364bf92f3577b34da6"
                let reply = try await http.post(
                    "/v1/accounts:signInWithIdp?key=\(API.key)",
                    ["requestUri": "http://localhost", "postBody": "providerId=google.com&id_token=\(token)", "returnSecureToken": true],
                    headers: [("traceparent", "00-\(trace)-00f067aa0ba902b7-01")])
                #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
                // The fetch was counted by its outcome too.
                let metrics = try await Self.scrape(http)
                #expect(metrics.value("accountd_idp_key_fetches_total", ["outcome": "ok"]) >= 1)
                let fetched = issuer.traceparents.dropFirst(before)
                #expect(!fetched.isEmpty, "the sign-in fetched no keys")
                for traceparent in fetched {
                    let parts = traceparent.split(separator: "-")
                    #expect(parts.count == 4 && parts[1] == trace && parts[2] != "00f067aa0ba902b7", "fetched with \(traceparent)")
                }
            }
        }
    }

    @Test("ACCOUNTD_LOG_FORMAT=json: every line of a run is one JSON object with the stable keys")
    func jsonLogs() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-json-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = try await RunningServer(
            database: try await TestDatabase.createMigrated(), environment: ["ACCOUNTD_LOG_FORMAT": "json", "LOG_LEVEL": "info"],
            logFile: log)
        let trace = "0af7651916cd43dd8448eb211c80319c"
        let reply = try await server.http.post(
            "/v1/accounts:signUp?key=\(RunningServer.apiKey)", ["email": "json-log@example.com", "password": "secret-pass"],
            headers: [("traceparent", "00-\(trace)-b7ad6b7169203331-01"), ("X-Request-Id", "json-log-request")])
        #expect(reply.status == 200)
        #expect(try await server.http.get("/v1/accounts:nothing?key=x").status == 404)
        try await server.stop()
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 3)
        var requestLine: [String: Any]?
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line.prefix(200))")
            guard let object else { continue }
            for key in ["time", "level", "message", "label", "source"] {
                #expect(object[key] is String, "\(key) missing in \(line.prefix(200))")
            }
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)
            if object["request_id"] as? String == "json-log-request" { requestLine = object }
        }
        let request = try #require(requestLine, "no line for the request")
        #expect(request["rpc"] as? String == "signUp")
        #expect(request["status"] as? String == "200")
        #expect(Int(request["duration_ms"] as? String ?? "") != nil)
        #expect(request["trace_id"] as? String == trace)
        #expect((request["span_id"] as? String)?.count == 16)
        // Nothing secret: the password never appears.
        #expect(!lines.contains { $0.contains("secret-pass") })
    }

    @Test("OTEL_EXPORTER_OTLP_ENDPOINT: the spans of a traced request reach an OTLP/HTTP collector, in the caller's trace")
    func otlpExport() async throws {
        let received = Mutex<[[UInt8]]>([])
        let router = Router()
        router.post("v1/traces") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 4 << 20)
            received.withLock { $0.append(Array(buffer: body)) }
            return .ok
        }
        let collector = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await collector.test(.live) { client in
            let endpoint = "http://127.0.0.1:\(try #require(client.port))"
            let server = try await RunningServer(
                database: try await TestDatabase.createMigrated(),
                environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"])
            let trace = "5ce0e9a56015fec5aadfa328ae398115"
            let reply = try await server.http.post(
                "/v1/accounts:signUp?key=\(RunningServer.apiKey)", ["email": "otlp@example.com", "password": "secret-pass"],
                headers: [("traceparent", "00-\(trace)-ab42124a3c573678-01")])
            #expect(reply.status == 200)
            // The OTLP body is protobuf: the trace id travels as its 16 raw bytes.
            let traceBytes = try #require(Hex.decode(trace))
            try await waitFor("a span of the request's trace at the collector") {
                received.withLock { bodies in bodies.contains { $0.firstRange(of: traceBytes) != nil } }
            }
            let joined = received.withLock { $0.joined() }
            #expect(joined.firstRange(of: Array("signUp".utf8)) != nil, "the RPC's span is named after it")
            #expect(joined.firstRange(of: Array("db.transaction".utf8)) != nil, "a transaction's span")
            try await server.stop()
        }
    }

    @Test("accountctl status: ready, version, database and pool figures; exit 69 when nothing listens")
    func accountctlStatus() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http, project: "acme-prod")
            _ = try await api.signUp("status@example.com")
            let run = try await AccountctlTests.run(["status", "--json"], url: http.admin.baseURL)
            #expect(run.status == 0, "\(run.errors)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: String], "\(run.output)")
            #expect(summary["ready"] == "yes")
            #expect(summary["version"] == MetricsEndpoint.version)
            #expect(summary["database"] == "up")
            #expect(summary["revocation listener"] == "listening")
            #expect(summary["requests"]?.hasSuffix("0 answered 5xx (0.000%)") == true, "\(summary["requests"] ?? "")")
            #expect(summary["pool"]?.contains(" idle of ") == true)
            let text = try await AccountctlTests.run(["status"], url: http.admin.baseURL)
            #expect(text.output.contains("ready: yes\n"))
        }
        let down = try await AccountctlTests.run(["status"], url: "http://127.0.0.1:\(try RunningServer.freePort())")
        #expect(down.status == 69)
    }

    @Test("TraceContext parses W3C traceparent and refuses malformed ones")
    func traceparentParsing() {
        let valid = TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "congo=t61rcWkgMzE")
        #expect(valid?.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(valid?.parentID == "00f067aa0ba902b7")
        #expect(valid?.state == "congo=t61rcWkgMzE")
        #expect(valid?.traceparent.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-") == true)
        #expect(valid?.traceparent.hasSuffix("-01") == true)
        // A later version's extra fields are accepted; version 00 with extra fields is not.
        #expect(TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", tracestate: nil) != nil)
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "garbage",
        ] {
            #expect(TraceContext(traceparent: bad, tracestate: nil) == nil, "\(bad)")
        }
    }
}
