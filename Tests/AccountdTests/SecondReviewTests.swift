import AccountAPI
import AccountCore
import AccountCrypto
import AccountPostgres
import AccountTesting
import Foundation
import HTTPTypes
import Logging
import NIOHTTP1
import PostgresNIO
import Synchronization
import Testing

@testable import accountd

/// The second outside review (issue 31), each finding tried again as the reviewer tried it: over
/// real HTTP, in a production configuration (a non-`demo-` project, abuse limits and enumeration
/// protection on, a trusted proxy naming each request's client), against PostgreSQL. Every test
/// here failed on the main branch it was written against.
@Suite("Second security review: bounds, addresses, trust, guesses")
struct SecondReviewTests {
    static let project = "acme-prod"
    static let home = "198.51.100.7"
    static let attacker = "203.0.113.9"

    /// The abuse-limit suite's real project (limits on, the loopback peer a trusted proxy), with
    /// enumeration protection on as a real project's default.
    static func configuration(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        AbuseLimitTests.configuration {
            $0.accounts.emailEnumerationProtection = true
            change(&$0)
        }
    }

    /// A client RPC from `address` (through the trusted proxy).
    static func call(_ http: TestHTTPClient, _ rpc: String, _ body: [String: any Sendable], from address: String) async throws
        -> TestHTTPClient.Reply
    {
        try await http.post("/v1/accounts:\(rpc)?key=\(API.key)", body, headers: [("X-Forwarded-For", address)])
    }

    /// One value of `rows` from `sql` (an integer).
    static func number(_ database: DatabaseURL, _ sql: String) async throws -> Int {
        try await TestDatabase.withClient(database) { client in
            var value = 0
            for number in try await client.query(PostgresQuery(unsafeSQL: sql, binds: PostgresBindings())).decode(Int?.self) {
                value = number ?? 0
            }
            return value
        }
    }

    /// An HTTPS issuer a real project trusts through `ACCOUNTD_IDP_CA_FILE`, for `body`.
    static func withIssuer<T: Sendable>(
        _ body: @escaping @Sendable (TestIssuer, String) async throws -> T
    ) async throws -> T {
        try await TestIssuer.with(tls: true) { issuer in
            let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("idp-ca-\(UUID().uuidString).pem")
            try Data(issuer.certificatePEM!.utf8).write(to: caFile)
            defer { try? FileManager.default.removeItem(at: caFile) }
            return try await body(issuer, caFile.path)
        }
    }

    /// Configures `oidc.<name>` on the admin listener, enabled, with `options` as its `accountdOptions`.
    static func configureOIDC(
        _ http: TestHTTPClient, _ name: String, issuer: String, options: [String: any Sendable]? = nil
    ) async throws {
        var body: [String: any Sendable] = ["clientId": "client-1", "issuer": issuer, "enabled": true]
        if let options { body["accountdOptions"] = options }
        let reply = try await http.admin.post(
            "/v2/projects/\(project)/oauthIdpConfigs?oauthIdpConfigId=oidc.\(name)", body, headers: [API.admin])
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
    }

    /// A sign-in with an ID token of `oidc.<name>`, from `address`.
    static func signInWithIdp(
        _ http: TestHTTPClient, _ name: String, _ token: String, from address: String, extra: [String: any Sendable] = [:]
    ) async throws -> TestHTTPClient.Reply {
        var body: [String: any Sendable] = ["requestUri": "http://localhost", "postBody": "providerId=oidc.\(name)&id_token=\(token)"]
        body.merge(extra) { $1 }
        return try await call(http, "signInWithIdp", body, from: address)
    }

    /// `count` characters of random base64url: incompressible, so a stored value takes its length.
    static func filler(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<count).map { _ in alphabet[Int(generator.next() % 64)] })
    }

    // MARK: 1. Unbounded flows

    @Test(
        "1: hundreds of oversized and normal createAuthUri calls from one address store kilobytes, then are refused with Retry-After; a flow is written only once its URL is built, and swept at its expiry"
    )
    func redirectFlowsAreBounded() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        try await Self.withIssuer { issuer, caFile in
            let configuration = Self.configuration { $0.federation.caFile = caFile }
            try await withServer(configuration, database: database, clock: clock) { http in
                try await Self.configureOIDC(http, "corp", issuer: issuer.url)
                // An issuer that cannot be reached: nothing is written for it.
                try await Self.configureOIDC(http, "dead", issuer: "https://127.0.0.1:9")
                func start(_ provider: String, _ extra: [String: any Sendable] = [:], from address: String = Self.attacker) async throws
                    -> TestHTTPClient.Reply
                {
                    var body: [String: any Sendable] = [
                        "providerId": provider, "continueUri": "https://app.example.com/finish", "sessionId": "s-1",
                    ]
                    body.merge(extra) { $1 }
                    return try await Self.call(http, "createAuthUri", body, from: address)
                }
                // Oversized: each field past its bound is refused before anything is stored.
                let oversized: [[String: any Sendable]] = [
                    ["context": Self.filler(64 << 10)], ["context": Self.filler(2049)], ["sessionId": Self.filler(257)],
                    ["sessionId": Self.filler(64 << 10)], ["oauthScope": Self.filler(1025)], ["hostedDomain": Self.filler(256)],
                    ["continueUri": "https://app.example.com/" + Self.filler(2048)],
                    ["customParameter": Dictionary(uniqueKeysWithValues: (0..<17).map { ("p\($0)", "v") })],
                    ["customParameter": ["login_hint": Self.filler(257)]], ["customParameter": [Self.filler(257): "v"]],
                ]
                for _ in 0..<20 {
                    for extra in oversized {
                        let refused = try await start("oidc.corp", extra)
                        #expect(refused.status == 400, "\(extra.keys.sorted())")
                        #expect(
                            refused.errorCode == "INVALID_ARGUMENT" || refused.errorCode == "INVALID_CONTINUE_URI",
                            "\(refused.errorMessage ?? "")")
                    }
                }
                #expect(try await Self.number(database, "SELECT count(*)::int FROM idp_flows") == 0)
                #expect(
                    try await start("oidc.dead").errorMessage == "INVALID_IDP_RESPONSE : Error connecting to the given credential's issuer."
                )
                #expect(try await Self.number(database, "SELECT count(*)::int FROM idp_flows") == 0, "no URL, no row")

                // At the bounds, flows are written, until the address's bucket is spent: a burst of 100.
                let maximal: [String: any Sendable] = [
                    "context": Self.filler(2048), "sessionId": Self.filler(256), "oauthScope": Self.filler(1024),
                    "customParameter": Dictionary(uniqueKeysWithValues: (0..<16).map { ("p\($0)", Self.filler(256)) }),
                ]
                var started = 0
                var refusal: TestHTTPClient.Reply?
                for _ in 0..<300 where refusal == nil {
                    let reply = try await start("oidc.corp", maximal)
                    if reply.status == 200 { started += 1 } else { refusal = reply }
                }
                // One cell went to the unreachable issuer's attempt.
                #expect(started == 99)
                #expect(
                    refusal?.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many requests from this network. Please try again later.")
                #expect(Int(refusal?.header("Retry-After") ?? "") == 10)
                let bytes = try await Self.number(database, "SELECT sum(octet_length(f::text))::int FROM idp_flows f")
                #expect(bytes < 512 << 10, "the flows table holds \(bytes) bytes")
                #expect(try await Self.number(database, "SELECT max(octet_length(f::text))::int FROM idp_flows f") < 4 << 10)
                // Another address has its own bucket.
                #expect(try await start("oidc.corp", from: Self.home).status == 200)

                // The sweeper removes flows as they expire (ten minutes), used or not.
                let sweeper = { (now: Date) in
                    try await TestDatabase.withClient(database) { client in
                        try await ExpiredRowSweeper(database: client, logger: TestDatabase.logger).sweepOnce(now: now)
                    }
                }
                _ = try await sweeper(clock.now() + 599)
                #expect(try await Self.number(database, "SELECT count(*)::int FROM idp_flows") == 100)
                _ = try await sweeper(clock.now() + 601)
                #expect(try await Self.number(database, "SELECT count(*)::int FROM idp_flows") == 0)
            }
        }
    }

    @Test("1: the project starts a bounded number of flows whatever addresses ask: 65,536 /64s of one /48 are no way around it")
    func redirectFlowsAreBoundedPerProject() async throws {
        let database = try await TestDatabase.createMigrated()
        try await Self.withIssuer { issuer, caFile in
            let configuration = Self.configuration {
                $0.federation.caFile = caFile
                $0.abuseLimits.buckets[.authFlowsPerProject] = RateBucket(burst: 5, period: 3600)
            }
            try await withServer(configuration, database: database, clock: ManualClock()) { http in
                try await Self.configureOIDC(http, "corp", issuer: issuer.url)
                var answers: [String] = []
                for network in 0..<8 {
                    let reply = try await Self.call(
                        http, "createAuthUri", ["providerId": "oidc.corp", "continueUri": "https://app.example.com/finish"],
                        from: "2001:db8:7:\(String(network, radix: 16))::1")
                    answers.append(reply.status == 200 ? "ok" : reply.errorMessage ?? "\(reply.status)")
                }
                #expect(Array(answers.prefix(5)) == Array(repeating: "ok", count: 5))
                #expect(
                    Array(answers.suffix(3))
                        == Array(
                            repeating: "TOO_MANY_ATTEMPTS_TRY_LATER : Too many sign-in flows are in progress. Please try again later.",
                            count: 3))
                #expect(try await Self.number(database, "SELECT count(*)::int FROM idp_flows") == 5)
            }
        }
    }

    @Test("1: discovery fetches are shared while in flight and a failure is remembered, so clients cannot open outbound fetches at will")
    func discoveryFetchesAreShared() async throws {
        let clock = ManualClock()
        try await Self.withIssuer { issuer, caFile in
            let configuration = Self.configuration {
                $0.federation.caFile = caFile
                $0.abuseLimits.buckets[.authFlowsPerIP] = nil
            }
            try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
                try await Self.configureOIDC(http, "corp", issuer: issuer.url)
                issuer.forceDiscoveryStatus(503)
                let body: [String: any Sendable] = ["providerId": "oidc.corp", "continueUri": "https://app.example.com/finish"]
                let replies = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<16 {
                        group.addTask { try await Self.call(http, "createAuthUri", body, from: "192.0.2.\(index + 1)").status }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(replies == Array(repeating: 400, count: 16))
                for index in 0..<16 { _ = try await Self.call(http, "createAuthUri", body, from: "192.0.2.\(index + 100)") }
                let fetched = issuer.discoveryFetches
                #expect(fetched == 1, "32 requests fetched discovery \(fetched) times")
                // Remembered briefly: once that has passed, the issuer is asked again and serves.
                issuer.forceDiscoveryStatus(0)
                #expect(try await Self.call(http, "createAuthUri", body, from: Self.home).status == 400)
                clock.advance(16)
                #expect(try await Self.call(http, "createAuthUri", body, from: Self.home).status == 200)
                #expect(issuer.discoveryFetches == fetched + 1)
            }
        }
    }

    @Test(
        "1: ActionCodeSettings' app fields are at most 255 bytes; a User-Agent is stored cut to 512; a continue URL past 2048 is invalid")
    func storedFieldsAreBounded() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            let settings: [String: any Sendable] = [
                "requestType": "EMAIL_SIGNIN", "email": "u@example.com", "continueUrl": "https://app.example.com/done",
                "canHandleCodeInApp": true,
            ]
            for field in ["iOSBundleId", "iOSAppStoreId", "androidPackageName", "androidMinimumVersion"] {
                var body = settings
                body[field] = Self.filler(256)
                if field == "iOSAppStoreId" { body["iOSBundleId"] = "com.example.app" }
                if field == "androidMinimumVersion" { body["androidPackageName"] = "com.example.app" }
                let refused = try await Self.call(http, "sendOobCode", body, from: "192.0.2.\(field.count)")
                #expect(refused.errorMessage == "INVALID_ARGUMENT : \(field) is longer than 255 bytes.", "\(field)")
            }
            var fits = settings
            fits["iOSBundleId"] = Self.filler(255)
            fits["androidPackageName"] = Self.filler(255)
            #expect(try await Self.call(http, "sendOobCode", fits, from: Self.home).status == 200)
            #expect(try await Self.number(database, "SELECT max(octet_length(settings::text))::int FROM action_codes") < 2048)
            var long = settings
            long["continueUrl"] = "https://app.example.com/" + Self.filler(2048)
            #expect(try await Self.call(http, "sendOobCode", long, from: Self.home).errorCode == "INVALID_CONTINUE_URI")

            let agent = String(repeating: "é", count: 4000)
            let signUp = try await http.post(
                "/v1/accounts:signUp?key=\(API.key)", ["email": "agent@example.com", "password": "secret-pass", "returnSecureToken": true],
                headers: [("User-Agent", agent)])
            #expect(signUp.status == 200)
            let stored = try await Self.number(database, "SELECT max(octet_length(user_agent))::int FROM sessions")
            #expect(stored > 500 && stored <= 512, "a cut at a character boundary: \(stored) bytes")
        }
    }

    /// Every name a handler of AccountAPI reads from a body (`body.string("x")`, `.value("x")`, …),
    /// from the sources: a field added later is walked without anyone listing it.
    static func bodyFieldNames() throws -> [String] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/AccountAPI")
        let pattern = try NSRegularExpression(
            pattern: #"\.(?:string|nonEmptyString|strings|bool|int64|objects|value|has)\("([A-Za-z_][A-Za-z0-9_]*)"\)"#)
        var names = Set<String>()
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" && !file.path.contains("/OpenAPI/") {  // the document describes, it reads nothing
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return names.sorted()
    }

    @Test("1: every client RPC of the route table, with 64 KiB in each field a handler reads, answers 400 and stores nothing")
    func everyClientFieldIsBounded() async throws {
        let fields = try Self.bodyFieldNames()
        #expect(fields.count > 60 && fields.contains("context") && fields.contains("iOSBundleId") && fields.contains("postBody"))
        let database = try await TestDatabase.createMigrated()
        let routes = Mutex<APIRoutes?>(nil)
        try await withServer(Self.configuration(), database: database, clock: ManualClock(), onRoutes: { r in routes.withLock { $0 = r } })
        {
            http in
            let table = try #require(routes.withLock { $0 })
            let rpcs = table.rpcs.filter { $0.value.access != .adminOnly }.sorted { $0.key < $1.key }
            #expect(rpcs.count > 20 && rpcs.contains { $0.key == "createAuthUri" } && table.token != nil)
            let signedIn = try await API(http: http, project: Self.project).signUp("walker@example.com")
            let big = Self.filler(64 << 10)
            var requests: [(String, String, [String: any Sendable])] = []
            for (name, endpoint) in rpcs {
                let path = name.contains("/") ? "/" + name : "/v1/accounts:" + name
                // Only what a client can reach: a name served on project paths alone is an admin's.
                guard case .rpc(name, nil, _) = APIPath(path) else { continue }
                for field in fields {
                    // A valid token elsewhere in the body, so a handler gets as far as it would for a real caller.
                    var body: [String: any Sendable] = ["idToken": signedIn.idToken, "email": "walker@example.com"]
                    body[field] = big
                    requests.append((endpoint.method == .get ? "GET" : "POST", path, body))
                }
            }
            for field in fields { requests.append(("TOKEN", "/v1/token", ["grant_type": "refresh_token", field: big])) }
            let before = try await Self.number(database, "SELECT count(*)::int FROM sessions")
            @Sendable func send(_ method: String, _ path: String, _ body: [String: any Sendable]) async throws -> String? {
                let reply: TestHTTPClient.Reply
                switch method {
                case "GET":
                    let query = body.compactMap { key, value in
                        (value as? String).map { "\(key)=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                    }.joined(separator: "&")
                    reply = try await http.get("\(path)?key=\(API.key)&\(query)")
                case "TOKEN":
                    let form = body.compactMap { key, value in (value as? String).map { "\(key)=\($0)" } }.joined(separator: "&")
                    reply = try await http.send(
                        .POST, "\(path)?key=\(API.key)", body: Data(form.utf8),
                        headers: [("Content-Type", "application/x-www-form-urlencoded")])
                default:
                    reply = try await http.post("\(path)?key=\(API.key)", body)
                }
                guard reply.status != 400 else { return nil }
                let field = body.first { ($0.value as? String)?.count == 64 << 10 }?.key ?? "?"
                return "\(method) \(path) \(field): \(reply.status) \(reply.errorMessage ?? "")"
            }
            var failures: [String] = []
            for batch in stride(from: 0, to: requests.count, by: 8).map({ Array(requests[$0..<min($0 + 8, requests.count)]) }) {
                failures += try await withThrowingTaskGroup(of: String?.self) { group in
                    for (method, path, body) in batch { group.addTask { try await send(method, path, body) } }
                    return try await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) fields were not refused: \(failures.prefix(20))")
            #expect(try await Self.number(database, "SELECT count(*)::int FROM sessions") == before, "nothing signed anyone in")
            // Nothing the walk sent is anywhere in the database.
            let largest = try await Self.number(
                database,
                """
                SELECT greatest((SELECT max(octet_length(t::text)) FROM users t), (SELECT max(octet_length(t::text)) FROM sessions t),
                                (SELECT max(octet_length(t::text)) FROM action_codes t), (SELECT max(octet_length(t::text)) FROM idp_flows t),
                                (SELECT max(octet_length(t::text)) FROM idp_pending t), (SELECT max(octet_length(t::text)) FROM email_outbox t),
                                (SELECT max(octet_length(t::text)) FROM audit_events t))::int
                """)
            #expect(largest < 16 << 10, "the largest stored row is \(largest) bytes")
        }
    }

    // MARK: 2. Dual-stack listeners

    @Test(
        "2: on a :: listener IPv4 clients are their IPv4 address: a trusted proxy given as 127.0.0.1/32 is believed, buckets are per client, sessions store the IPv4 address"
    )
    func mappedAddressesAreIPv4() async throws {
        let database = try await TestDatabase.createMigrated()
        // The built server, as an operator runs it on a dual-stack listener behind a proxy on loopback;
        // the test connects to 127.0.0.1, which the :: listener sees as ::ffff:127.0.0.1.
        let server = try await RunningServer(
            database: database,
            environment: [
                "ACCOUNTD_HOST": "::", "ACCOUNTD_PUBLIC_URL": "https://auth.example.com", "ACCOUNTD_TRUSTED_PROXIES": "127.0.0.1/32",
                "ACCOUNTD_LIMIT_PASSWORD_FAILURES_PER_IP": "3/1h",
            ])
        func call(_ rpc: String, _ body: [String: any Sendable], from address: String?) async throws -> TestHTTPClient.Reply {
            try await server.http.post(
                "/v1/accounts:\(rpc)?key=\(RunningServer.apiKey)", body, headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
        }
        let signUp = try await call(
            "signUp", ["email": "u@example.com", "password": "right-pass", "returnSecureToken": true], from: Self.home)
        #expect(signUp.status == 200, "\(String(decoding: signUp.body, as: UTF8.self))")
        let direct = try await call(
            "signUp", ["email": "direct@example.com", "password": "right-pass", "returnSecureToken": true], from: nil)
        #expect(direct.status == 200)
        let stored = try await TestDatabase.withClient(database) { client in
            var addresses: [String] = []
            for address in try await client.query("SELECT ip_address FROM sessions ORDER BY created_at").decode(String.self) {
                addresses.append(address)
            }
            return addresses
        }
        #expect(stored == [Self.home, "127.0.0.1"], "the forwarded client, and the peer as IPv4")

        // One client's wrong passwords spend its own bucket, not every IPv4 client's.
        for _ in 1...3 {
            let wrong = try await call("signInWithPassword", ["email": "u@example.com", "password": "wrong"], from: Self.attacker)
            #expect(wrong.errorCode == "INVALID_LOGIN_CREDENTIALS")
        }
        let spent = try await call("signInWithPassword", ["email": "u@example.com", "password": "wrong"], from: Self.attacker)
        #expect(spent.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many unsuccessful login attempts. Please try again later.")
        let other = try await call("signInWithPassword", ["email": "u@example.com", "password": "right-pass"], from: "192.0.2.44")
        #expect(other.status == 200, "another IPv4 client is not the attacker")
        // A mapped or NAT64 address in the header is the same client as its IPv4 form.
        let mapped = try await call("signInWithPassword", ["email": "u@example.com", "password": "wrong"], from: "::ffff:\(Self.attacker)")
        #expect(mapped.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER")
        let nat64 = try await call("signInWithPassword", ["email": "u@example.com", "password": "wrong"], from: "64:ff9b::cb00:7109")
        #expect(nat64.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "64:ff9b::203.0.113.9 is 203.0.113.9")
        try await server.stop()
    }

    @Test("2: a demo project on a wildcard listener without a public URL sends links on loopback, never a 500")
    func wildcardListenerSendsMail() async throws {
        for host in ["::", "0.0.0.0"] {
            let database = try await TestDatabase.createMigrated()
            var configuration = testConfiguration()
            configuration.listen.host = host
            try await withServer(configuration, database: database) { http in
                let sent = try await API(http: http).client(
                    "sendOobCode",
                    [
                        "requestType": "EMAIL_SIGNIN", "email": "u@example.com", "continueUrl": "http://localhost/done",
                        "canHandleCodeInApp": true,
                    ])
                #expect(sent.status == 200, "\(host): \(String(decoding: sent.body, as: UTF8.self))")
                let body = try await TestDatabase.withClient(database) { client in
                    var text = ""
                    for value in try await client.query("SELECT body_text FROM email_outbox").decode(String.self) { text = value }
                    return text
                }
                #expect(body.contains("http://127.0.0.1:"), "\(host)")
            }
        }
    }

    // MARK: 3. Mail for unknown addresses

    @Test(
        "3: resets for addresses with no account do not spend the project's quota; once real mail spent it, known and unknown addresses get the same answer; IPv6 senders count by /56"
    )
    func mailQuotaCountsQueuedMail() async throws {
        let database = try await TestDatabase.createMigrated()
        let configuration = Self.configuration { $0.abuseLimits.mailQuotas[.passwordReset] = RateBucket(burst: 2, period: 86400) }
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            _ = try await api.signUp("one@example.com")
            _ = try await api.signUp("two@example.com")
            _ = try await api.signUp("three@example.com")
            func reset(_ email: String, from address: String) async throws -> TestHTTPClient.Reply {
                try await Self.call(http, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email], from: address)
            }
            for index in 1...5 {
                #expect(try await reset("nobody\(index)@example.com", from: "192.0.2.\(index)").status == 200)
            }
            #expect(try await EmailActionsTests.outboxCount(database) == 0)
            #expect(try await reset("one@example.com", from: "192.0.2.10").status == 200)
            #expect(try await reset("two@example.com", from: "192.0.2.11").status == 200)
            #expect(try await EmailActionsTests.outboxCount(database) == 2, "real users' resets are queued")
            let known = try await reset("three@example.com", from: "192.0.2.12")
            let unknown = try await reset("nobody9@example.com", from: "192.0.2.13")
            #expect(known.errorMessage == "QUOTA_EXCEEDED : Exceeded daily quota for password reset emails.")
            #expect(unknown.errorMessage == known.errorMessage && unknown.header("Retry-After") == known.header("Retry-After"))
        }
        let perNetwork = Self.configuration { $0.abuseLimits.buckets[.mailPerIP] = RateBucket(burst: 1, period: 3600) }
        try await withServer(perNetwork, database: try await TestDatabase.createMigrated(), clock: ManualClock()) {
            (http: TestHTTPClient) async throws in
            func reset(_ email: String, from address: String) async throws -> TestHTTPClient.Reply {
                try await Self.call(http, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email], from: address)
            }
            #expect(try await reset("a@example.com", from: "2001:db8:1:100::1").status == 200)
            #expect(try await reset("b@example.com", from: "2001:db8:1:1ff::2").errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "same /56")
            #expect(try await reset("c@example.com", from: "2001:db8:1:200::1").status == 200, "another /56")
        }
    }

    // MARK: 4. Federated trust

    static func lookup(_ http: TestHTTPClient, _ localID: String) async throws -> [String: Any] {
        let reply = try await API(http: http, project: Self.project).admin("lookup", ["localId": [localID]])
        return (reply.json["users"] as? [[String: Any]])?.first ?? [:]
    }

    static func providers(_ user: [String: Any]) -> [String] {
        (user["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
    }

    @Test(
        "4: an IdP not trusted for a domain creates no verified address there, so the mailbox's owner resetting the password strips the squatter's identity"
    )
    func untrustedIdPMintsNoVerifiedEmail() async throws {
        let clock = ManualClock()
        try await Self.withIssuer { issuer, caFile in
            try await withServer(
                Self.configuration { $0.federation.caFile = caFile }, database: try await TestDatabase.createMigrated(), clock: clock
            ) {
                http in
                let api = API(http: http, project: Self.project)
                try await Self.configureOIDC(http, "partner", issuer: issuer.url, options: ["trustedEmailDomains": ["partner.example"]])
                let squat = try issuer.token(sub: "squatter", email: "v@corp.example", emailVerified: true, issuedAt: clock.now())
                let created = try await Self.signInWithIdp(http, "partner", squat, from: Self.attacker)
                #expect(created.json["isNewUser"] as? Bool == true, "\(String(decoding: created.body, as: UTF8.self))")
                let localID = try #require(created.string("localId"))
                #expect(
                    try await Self.lookup(http, localID)["emailVerified"] as? Bool == false, "the assertion's true is not the account's")
                #expect(Session(created).claims["email_verified"] as? Bool == false)

                // The mailbox's owner resets the password: the squatter's identity and sessions go.
                let reset = try await api.admin(
                    "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "v@corp.example", "returnOobLink": true])
                let code = try #require(reset.string("oobCode"))
                let done = try await Self.call(http, "resetPassword", ["oobCode": code, "newPassword": "owner-pass"], from: Self.home)
                #expect(done.status == 200)
                let after = try await Self.lookup(http, localID)
                #expect(Self.providers(after) == ["password"] && after["emailVerified"] as? Bool == true)
                #expect(try await api.refresh(Session(created).refreshToken).errorCode == "TOKEN_EXPIRED")
                let again = try issuer.token(sub: "squatter", email: "v@corp.example", emailVerified: true, issuedAt: clock.now())
                let back = try await Self.signInWithIdp(http, "partner", again, from: Self.attacker)
                #expect(back.json["needConfirmation"] as? Bool == true && back.string("idToken") == nil, "the squatter is locked out")
                let owner = try await Self.call(
                    http, "signInWithPassword", ["email": "v@corp.example", "password": "owner-pass", "returnSecureToken": true],
                    from: Self.home)
                #expect(owner.string("localId") == localID)
            }
        }
    }

    @Test(
        "4: a new OIDC provider trusts no domain: a verified assertion of an unverified account's email asks for confirmation and strips nothing; '*' is logged at start"
    )
    func oidcTrustsNoDomainByDefault() async throws {
        let clock = ManualClock()
        let database = try await TestDatabase.createMigrated()
        try await Self.withIssuer { issuer, caFile in
            try await withServer(Self.configuration { $0.federation.caFile = caFile }, database: database, clock: clock) { http in
                try await Self.configureOIDC(http, "workforce", issuer: issuer.url)
                let config = try await http.admin.get("/v2/projects/\(Self.project)/oauthIdpConfigs/oidc.workforce", headers: [API.admin])
                #expect((config.json["accountdOptions"] as? [String: Any])?["trustedEmailDomains"] == nil, "no choice made: the default")
                let victim = try await Self.call(
                    http, "signUp", ["email": "victim@customer.example", "password": "victim-pass", "returnSecureToken": true],
                    from: Self.home)
                let token = try issuer.token(sub: "w-1", email: "victim@customer.example", emailVerified: true, issuedAt: clock.now())
                let asked = try await Self.signInWithIdp(http, "workforce", token, from: Self.attacker)
                #expect(asked.json["needConfirmation"] as? Bool == true && asked.string("idToken") == nil)
                #expect(try await API(http: http, project: Self.project).refresh(Session(victim).refreshToken).status == 200)
                let signIn = try await Self.call(
                    http, "signInWithPassword", ["email": "victim@customer.example", "password": "victim-pass"], from: Self.home)
                #expect(signIn.status == 200, "nothing was stripped")

                try await Self.configureOIDC(http, "anyone", issuer: issuer.url, options: ["trustedEmailDomains": ["*"]])
            }
        }
        // At start, each provider an operator made trust every domain is named in a warning.
        let sealer = KeySealer(keyEncryptionKey: productionConfiguration().keys.keyEncryptionKey)
        let warnings = try await TestDatabase.withClient(database) { client in
            let recorder = RecordingLogHandler()
            let store = PostgresIdPConfigStore(database: client, logger: TestDatabase.logger, sealer: sealer, project: Self.project)
            try await warnOfProvidersTrustingAnyDomain(store, logger: Logger(label: "test") { _ in recorder })
            return recorder.records
        }
        #expect(warnings.map(\.provider) == ["oidc.anyone"] && warnings.allSatisfy { $0.level == .warning })
    }

    @Test("4: accounts created by IdP sign-in count in account_creations_per_ip; a returning identity is never refused by it")
    func idpCreationsAreCounted() async throws {
        let clock = ManualClock()
        try await Self.withIssuer { issuer, caFile in
            let configuration = Self.configuration {
                $0.federation.caFile = caFile
                $0.abuseLimits.buckets[.accountCreationsPerIP] = RateBucket(burst: 2, period: 3600)
            }
            try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
                try await Self.configureOIDC(http, "corp", issuer: issuer.url)
                for sub in ["n-1", "n-2"] {
                    let created = try await Self.signInWithIdp(
                        http, "corp", try issuer.token(sub: sub, issuedAt: clock.now()), from: Self.attacker)
                    #expect(created.json["isNewUser"] as? Bool == true)
                }
                let third = try await Self.signInWithIdp(
                    http, "corp", try issuer.token(sub: "n-3", issuedAt: clock.now()), from: Self.attacker)
                #expect(
                    third.errorMessage
                        == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many accounts created from this network. Please try again later.")
                #expect(third.header("Retry-After") == "3600")
                let returning = try await Self.signInWithIdp(
                    http, "corp", try issuer.token(sub: "n-1", issuedAt: clock.now()), from: Self.attacker)
                #expect(returning.status == 200 && returning.json["isNewUser"] == nil)
            }
        }
    }

    @Test(
        "4: an account is anonymous only as anonymous sign-up made it: unlinking its last identity does not exempt it from the recent sign-in rule again"
    )
    func anonymityIsRecorded() async throws {
        let clock = ManualClock()
        try await Self.withIssuer { issuer, caFile in
            let configuration = Self.configuration {
                $0.federation.caFile = caFile
                $0.accounts.allowAnonymous = true
            }
            try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
                let api = API(http: http, project: Self.project)
                try await Self.configureOIDC(http, "corp", issuer: issuer.url)
                let guest = Session(try await Self.call(http, "signUp", ["returnSecureToken": true], from: Self.home))
                let linked = try await Self.signInWithIdp(
                    http, "corp", try issuer.token(sub: "g-1", issuedAt: clock.now()), from: Self.home, extra: ["idToken": guest.idToken])
                #expect(linked.string("localId") == guest.localID)
                let unlinked = try await api.client("update", ["idToken": guest.idToken, "deleteProvider": ["oidc.corp"]])
                let remaining = Self.providers(try await Self.lookup(http, guest.localID))
                #expect(unlinked.status == 200 && remaining.isEmpty)

                // Ten minutes on, a stolen refresh token mints an ID token with the old sign-in time.
                clock.advance(600)
                let stale = Session(try await api.refresh(guest.refreshToken))
                let attach = try await Self.signInWithIdp(
                    http, "corp", try issuer.token(sub: "thief", issuedAt: clock.now()), from: Self.attacker,
                    extra: ["idToken": stale.idToken])
                #expect(attach.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(String(decoding: attach.body, as: UTF8.self))")
                #expect(try await api.client("delete", ["idToken": stale.idToken]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")

                // A guest that never had a credential is still kept by linking, however old its sign-in.
                let other = Session(try await Self.call(http, "signUp", ["returnSecureToken": true], from: Self.home))
                clock.advance(600)
                let kept = Session(try await api.refresh(other.refreshToken))
                let upgraded = try await Self.signInWithIdp(
                    http, "corp", try issuer.token(sub: "g-2", issuedAt: clock.now()), from: Self.home, extra: ["idToken": kept.idToken])
                #expect(upgraded.string("localId") == other.localID, "\(String(decoding: upgraded.body, as: UTF8.self))")
            }
        }
    }

    @Test("4: the known-network test ignores sessions revoked by THE RULE: a squatter's old address is an unknown network")
    func disownedSessionsProveNoNetwork() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            let squatter = try await Self.call(
                http, "signUp", ["email": "victim@example.com", "password": "squatter-pass", "returnSecureToken": true], from: Self.attacker
            )
            #expect(squatter.status == 200)
            let code = try await EmailActionsTests.signInCode(api, "victim@example.com")
            let owner = Session(
                try await Self.call(http, "signInWithEmailLink", ["email": "victim@example.com", "oobCode": code], from: Self.home))
            #expect(owner.localID == squatter.string("localId"))
            #expect(try await api.client("update", ["idToken": owner.idToken, "password": "owner-pass"]).status == 200)
            for attempt in 1...5 {
                let wrong = try await Self.call(
                    http, "signInWithPassword", ["email": "victim@example.com", "password": "guess-\(attempt)"], from: Self.attacker)
                #expect(wrong.errorCode == "INVALID_LOGIN_CREDENTIALS")
            }
            let locked = try await Self.call(
                http, "signInWithPassword", ["email": "victim@example.com", "password": "owner-pass"], from: Self.attacker)
            #expect(
                locked.errorMessage == "TOO_MANY_ATTEMPTS_TRY_LATER : " + AbuseLimiter.lockedText, "five, the unknown network's threshold")
            #expect(
                try await Self.call(http, "signInWithPassword", ["email": "victim@example.com", "password": "owner-pass"], from: Self.home)
                    .status == 200)
        }
    }

    // MARK: 5. Cheap guesses

    @Test(
        "5: imports whose hashes would cost more than a few native verifications are refused in the reference's words; one imported before costs a sign-in nothing"
    )
    func importedHashCostsAreBounded() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(Self.configuration(), database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            func batch(_ parameters: [String: any Sendable], hash: String = "c2VjcmV0", email: String = "i@example.com") async throws
                -> TestHTTPClient.Reply
            {
                var body = parameters
                body["users"] = [["localId": "imported-1", "email": email, "passwordHash": hash, "salt": "c2FsdA"]]
                return try await api.admin("batchCreate", body)
            }
            let scrypt: [String: any Sendable] = [
                "hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 131072, "blockSize": 8, "parallelization": 1, "dkLen": 64,
            ]
            #expect(try await batch(scrypt).errorMessage == "INVALID_HASH_CPU_MEM_COST")
            var wide = scrypt
            wide["cpuMemCost"] = 1024
            wide["parallelization"] = 8
            #expect(try await batch(wide).errorMessage == "INVALID_HASH_PARALLELIZATION")
            let argon2: [String: any Sendable] = [
                "hashAlgorithm": "ARGON2",
                "argon2Parameters": [
                    "hashType": "ARGON2_ID", "iterations": 16, "memoryCostKib": 32768, "parallelism": 1, "hashLengthBytes": 32,
                ] as [String: any Sendable],
            ]
            #expect(try await batch(argon2).errorMessage == "INVALID_HASH_ROUNDS")
            let bcrypt = Data("$2b$15$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm".utf8).base64EncodedString()
            let refused = try await batch(["hashAlgorithm": "BCRYPT"], hash: bcrypt)
            #expect(refused.status == 200)
            #expect((refused.json["error"] as? [[String: Any]])?.first?["message"] as? String == "bcrypt cost 15 is above 14")

            // A user imported within bounds, whose parameters are then made the reviewer's (as an
            // import before this release could have left them): a guess is answered at once.
            var fits = scrypt
            fits["cpuMemCost"] = 16384
            #expect((try await batch(fits).json["error"] as? [Any])?.isEmpty == true)
            try await TestDatabase.withClient(database) { client in
                try await client.query(
                    """
                    UPDATE password_credentials SET parameters = '{"cpuMemCost":"131072","blockSize":"16","parallelization":"16","dkLen":"64"}'
                    WHERE local_id = 'imported-1'
                    """)
            }
            let guess = try await Self.call(
                http, "signInWithPassword", ["email": "i@example.com", "password": "guess"], from: Self.attacker)
            #expect(guess.errorCode == "INVALID_LOGIN_CREDENTIALS", "not a 503 after 30 s of scrypt")
        }
    }

    @Test(
        "5: refused admin tokens count per address: a spent address's guesses are refused with Retry-After; a configured token never is"
    )
    func adminTokenGuessesAreCounted() async throws {
        let clock = ManualClock()
        let configuration = Self.configuration { $0.abuseLimits.buckets[.adminTokenFailuresPerIP] = RateBucket(burst: 3, period: 1200) }
        try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: clock) { http in
            func lookup(_ token: String, from address: String) async throws -> TestHTTPClient.Reply {
                try await http.admin.post(
                    "/v1/projects/\(Self.project)/accounts:lookup", ["localId": ["nobody"]],
                    headers: [("Authorization", "Bearer \(token)"), ("X-Forwarded-For", address)])
            }
            let right = String(API.admin.1.dropFirst("Bearer ".count))
            for guess in 1...3 { #expect(try await lookup("guess-\(guess)", from: Self.attacker).status == 401) }
            let spent = try await lookup("guess-4", from: Self.attacker)
            #expect(spent.status == 400 && spent.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER" && spent.header("Retry-After") == "1200")
            #expect(try await lookup("guess-5", from: Self.attacker).errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER")
            // Admin calls are never limited (§E.6): an operator sharing the guesser's address is not locked out.
            #expect(try await lookup(right, from: Self.attacker).status == 200)
            #expect(try await lookup("guess-6", from: Self.home).status == 401, "another address has its own bucket")
            clock.advance(1200)
            #expect(try await lookup("guess-7", from: Self.attacker).status == 401, "refilled")
        }
    }

    @Test(
        "5: a refresh token's MAC is checked before any database read: a forged one is refused while the sessions table is locked; first-format tokens still refresh, unless switched off"
    )
    func refreshMACBeforeDatabase() async throws {
        let database = try await TestDatabase.createMigrated()
        let configuration = Self.configuration()
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            let session = try await api.signUp("r@example.com")
            #expect(session.refreshToken.count == 100)
            var bytes = try #require(TestBase64URL.decode(session.refreshToken))
            bytes[bytes.count - 1] ^= 1
            let forged = TestBase64URL.encode(bytes)
            let refused = try await TestDatabase.withClient(database) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE", logger: TestDatabase.logger)
                    return try await api.refresh(forged)
                }
            }
            #expect(refused.errorCode == "INVALID_REFRESH_TOKEN", "answered without waiting on the table")

            // A new installation has no session holding a first-format token: it refuses that format.
            let legacy = try await Self.versionOneToken(session, configuration: configuration, database: database)
            #expect(try await api.refresh(legacy).errorCode == "INVALID_REFRESH_TOKEN")
        }
        // An upgraded one, whose live sessions hold first-format tokens, accepts them into version 2
        // (auto); explicitly off, it refuses them.
        try await TestDatabase.withClient(database) { client in try await client.query("UPDATE sessions SET token_format = 1") }
        try await withServer(configuration, database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            let session = Session(try await api.client("signInWithPassword", ["email": "r@example.com", "password": "secret-pass"]))
            let legacy = try await Self.versionOneToken(session, configuration: configuration, database: database)
            let upgraded = try await api.refresh(legacy)
            #expect(upgraded.status == 200 && upgraded.string("refresh_token")?.count == 100)
            let sessionID = session.claims["sid"] as? String ?? ""
            let format = try await Self.number(database, "SELECT token_format::int FROM sessions WHERE session_id = '\(sessionID)'")
            #expect(format == 2, "the session now holds a version 2 token")
        }
        let strict = Self.configuration { $0.keys.acceptVersion1RefreshTokens = false }
        try await withServer(strict, database: database, clock: ManualClock()) { http in
            let api = API(http: http, project: Self.project)
            let session = Session(try await api.client("signInWithPassword", ["email": "r@example.com", "password": "secret-pass"]))
            let legacy = try await Self.versionOneToken(session, configuration: strict, database: database)
            #expect(try await api.refresh(legacy).errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    /// A first-format refresh token for `session`'s current generation, as it was issued before version 2.
    static func versionOneToken(_ session: Session, configuration: Configuration, database: DatabaseURL) async throws -> String {
        let sealer = KeySealer(keyEncryptionKey: configuration.keys.keyEncryptionKey)
        let keyID = "k" + sealer.kekID.prefix(8)
        let codec = HMACRefreshTokenCodec(
            masterKeys: [keyID: sealer.derive(info: "accountd refresh-token master v1", count: 32)], currentKeyID: keyID)
        let sessionID = try #require(session.claims["sid"] as? String)
        let (salt, generation) = try await TestDatabase.withClient(database) { client in
            var row: ([UInt8], Int64) = ([], 0)
            for (salt, generation) in try await client.query(
                "SELECT refresh_salt, refresh_generation FROM sessions WHERE session_id = \(sessionID)"
            ).decode((Data, Int64).self) {
                row = (Array(salt), generation)
            }
            return row
        }
        return try codec.versionOneToken(sessionID: sessionID, generation: generation, salt: salt, keyID: keyID)
    }

    @Test(
        "5: the action page counts wrong codes against the visitor's address, shared with the RPCs, and its reset form counts mail per address"
    )
    func actionPageCountsLikeTheRPCs() async throws {
        let configuration = Self.configuration {
            $0.abuseLimits.buckets[.codeFailuresPerIP] = RateBucket(burst: 3, period: 3600)
            $0.abuseLimits.buckets[.mailPerIP] = RateBucket(burst: 1, period: 3600)
        }
        try await withServer(configuration, database: try await TestDatabase.createMigrated(), clock: ManualClock()) { http in
            func page(_ code: String, from address: String) async throws -> TestHTTPClient.Reply {
                try await http.get(
                    "/__/auth/action?mode=resetPassword&oobCode=\(code)&apiKey=\(API.key)", headers: [("X-Forwarded-For", address)])
            }
            for index in 1...3 { #expect(try await page("bogus-\(index)", from: Self.attacker).status == 400) }
            let spent = try await page("bogus-4", from: Self.attacker)
            #expect(spent.status == 429 && spent.header("Retry-After") == "3600")
            let rpc = try await Self.call(http, "resetPassword", ["oobCode": "bogus-5"], from: Self.attacker)
            #expect(rpc.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "one budget for the page and the RPCs")
            #expect(try await Self.call(http, "resetPassword", ["oobCode": "bogus-6"], from: Self.home).errorCode == "INVALID_OOB_CODE")

            let csrf = ActionPageCSRF(
                key: KeySealer(keyEncryptionKey: configuration.keys.keyEncryptionKey).derive(
                    info: "accountd action-page csrf v1", count: 32))
            func sendReset(_ email: String) async throws -> TestHTTPClient.Reply {
                let form = "email=\(email)&csrf=\(csrf.token(purpose: "sendPasswordReset", value: email))&lang=en"
                return try await http.send(
                    .POST, "/__/auth/action/sendPasswordReset", body: Data(form.utf8),
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", Self.attacker)])
            }
            #expect(try await sendReset("one@example.com").status == 200)
            #expect(try await sendReset("two@example.com").status == 429, "the address's mail bucket")
        }
    }
}

/// Collects what a logger was told: the warnings' `provider` metadata and level.
final class RecordingLogHandler: LogHandler, Sendable {
    private let storage = Mutex<[(level: Logger.Level, provider: String)]>([])
    var records: [(level: Logger.Level, provider: String)] { storage.withLock { $0 } }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }
    func log(event: LogEvent) {
        storage.withLock { $0.append((event.level, event.metadata?["provider"].map { "\($0)" } ?? "")) }
    }
}
