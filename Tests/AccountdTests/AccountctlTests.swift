import AccountTesting
import Foundation
import Testing
import _CryptoExtras

@testable import accountd

/// accountctl, the built binary, against a live server and database.
@Suite("accountctl against a live server")
struct AccountctlTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static var binary: URL {
        TestDatabase.migrationsDirectory.deletingLastPathComponent().appendingPathComponent(".build/debug/accountctl")
    }

    /// Runs accountctl with `arguments` against `url` (nil: what `environment` or the default says),
    /// the admin token in the environment. It waits
    /// without blocking a thread: the server under test answers on the same cooperative pool, and
    /// two tests blocked in `waitUntilExit` on a 2-core machine would leave it none.
    static func run(
        _ arguments: [String], url: String?, token: String = "test-admin-token-7Hq2vX9pL4mZ8wR", input: String? = nil,
        environment: [String: String] = ["ACCOUNTD_PROJECT_ID": "demo-test"]
    ) async throws -> Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accountctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out")
        let errURL = directory.appendingPathComponent("err")
        let inURL = directory.appendingPathComponent("in")
        try Data((input ?? "").utf8).write(to: inURL)
        let child = try ChildProcess(
            binary.path, arguments + (url.map { ["--url", $0] } ?? []),
            environment: environment.merging(["ACCOUNTD_ADMIN_TOKEN": token, "PATH": "/usr/bin:/bin"]) { $1 }, input: inURL.path,
            output: outURL.path, errors: errURL.path)
        let status = try await child.exit()
        return Run(
            status: status, output: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    @Test("config get and set turn phone sign-in on; a phone user is found by number and signed out")
    func configAndPhoneUsers() async throws {
        try await withServer(PhoneSignInTests.demoConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let url = http.baseURL
            let before = try await Self.run(["config", "get"], url: url)
            let config = try JSONSerialization.jsonObject(with: Data(before.output.utf8)) as? [String: Any]
            #expect(
                before.status == 0
                    && ((config?["signIn"] as? [String: Any])?["phoneNumber"] as? [String: Any])?["enabled"] as? Bool == false)
            let set = try await Self.run(
                ["config", "set", "signIn.phoneNumber.enabled=true", #"signIn.phoneNumber.testPhoneNumbers={"+16505550101":"123456"}"#],
                url: url)
            #expect(set.status == 0 && set.output.contains("updated signIn.phoneNumber.enabled"), "\(set.errors)")
            let refused = try await Self.run(["config", "set", "mfa.state=ON"], url: url)
            #expect(refused.status != 0 && refused.errors.contains("mfa.state"))

            let sent = try await api.client("sendVerificationCode", ["phoneNumber": "+16505550101"])
            let signedIn = try await api.client(
                "signInWithPhoneNumber", ["sessionInfo": try #require(sent.string("sessionInfo")), "code": "123456"])
            let session = Session(signedIn)
            let got = try await Self.run(["users", "get", "+16505550101"], url: url)
            #expect(got.status == 0 && got.output.contains(session.localID))
            let signOut = try await Self.run(["users", "sign-out", "+16505550101"], url: url)
            #expect(signOut.output.contains("1 session(s) revoked"))
            #expect(try await api.refresh(session.refreshToken).status == 400)
        }
    }

    @Test("get, list, sign-out, sessions, disable/enable, delete, links, keys, audit, export — with exit codes that mean something")
    func operatorFlows() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            _ = try await api.signIn("alice@example.com")
            _ = try await api.signUp("bob@example.com")
            let url = http.baseURL

            let got = try await Self.run(["users", "get", "alice@example.com"], url: url)
            #expect(got.status == 0)
            #expect(got.output.contains(alice.localID))
            #expect(got.output.contains("password"))
            #expect(!got.output.contains("UkVEQUNURUQ="))
            let json = try await Self.run(["users", "get", alice.localID, "--json"], url: url)
            let record = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            #expect(record?["email"] as? String == "alice@example.com")
            #expect(record?["passwordHash"] == nil)

            let list = try await Self.run(["users", "list", "--query", "ali"], url: url)
            #expect(list.output.contains("alice@example.com"))
            #expect(!list.output.contains("bob@example.com"))

            let sessions = try await Self.run(["sessions", "list", "alice@example.com"], url: url)
            #expect(sessions.output.split(separator: "\n").count == 3)  // header + 2
            let sid = try #require(alice.claims["sid"] as? String)
            #expect(try await Self.run(["sessions", "revoke", sid], url: url).output.contains("revoked session \(sid)"))
            #expect(try await api.refresh(alice.refreshToken).errorCode == "TOKEN_EXPIRED")

            let signOut = try await Self.run(["users", "sign-out", "alice@example.com"], url: url)
            #expect(signOut.output.contains("1 session(s) revoked"))

            #expect(try await Self.run(["users", "disable", "bob@example.com"], url: url).status == 0)
            #expect(
                try await api.client("signInWithPassword", ["email": "bob@example.com", "password": "secret-pass"]).errorCode
                    == "USER_DISABLED")
            #expect(try await Self.run(["users", "enable", "bob@example.com"], url: url).status == 0)
            _ = try await api.signIn("bob@example.com")

            let link = try await Self.run(["links", "reset", "bob@example.com"], url: url)
            #expect(link.output.contains("mode=resetPassword"))
            #expect(try await Self.run(["keys", "list"], url: url).output.contains("current"))

            let export = try await Self.run(["users", "export"], url: url)
            #expect(export.output.split(separator: "\n").count == 2)
            #expect(!export.output.contains("passwordHash"))
            #expect(try await Self.run(["users", "export", "--with-hashes"], url: url).output.contains("passwordHash"))

            // Import with the parameters that have no option of their own (phc-winner-argon2's Argon2d vector).
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(
                #"{"localId":"argon","email":"argon@example.com","salt":"c29tZXNhbHQ=","passwordHash":"JcTui6RIBUtJ78gE5Hi52CO+H5vS6Z9R1uxAB6OhUB8="}"#
                    .utf8
            ).write(to: file)
            let argon2 = ["hashType=ARGON2_D", "iterations=2", "memoryCostKib=256", "parallelism=1", "hashLengthBytes=32"]
            let imported = try await Self.run(
                ["users", "import", file.path, "--hash-algorithm", "ARGON2"] + argon2.flatMap { ["--hash-parameter", $0] }, url: url)
            #expect(imported.status == 0, "\(imported.errors)")
            #expect(try await api.signIn("argon@example.com", "password").localID == "argon")
            #expect(try await Self.run(["users", "import", file.path, "--hash-parameter", "rounds"], url: url).status == 64)

            let refused = try await Self.run(["users", "delete", "bob@example.com"], url: url, input: "no\n")
            #expect(refused.status == 64)
            #expect(try await Self.run(["users", "delete", "bob@example.com", "--yes"], url: url).status == 0)

            let audit = try await Self.run(["audit", alice.localID], url: url)
            #expect(audit.output.contains("ALL_SESSIONS_REVOKED"))
            #expect(audit.output.contains("admin:ops"))

            // Exit codes: not found, unauthorised, unreachable, usage.
            let missing = try await Self.run(["users", "get", "nobody@example.com"], url: url)
            #expect(missing.status == 66)
            #expect(missing.errors.hasPrefix("accountctl: "))
            #expect(try await Self.run(["users", "get", "x@example.com"], url: url, token: "wrong").status == 77)
            #expect(try await Self.run(["users", "get", "x@example.com"], url: "http://127.0.0.1:1").status == 69)
            #expect(try await Self.run(["users", "frobnicate"], url: url).status == 64)
        }
    }

    @Test(
        "custom-tokens: add a signer from a service-account file (the private key stays here), list it, sign in with its token, remove it")
    func customTokenSigners() async throws {
        let account = try ServiceAccount("cli")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("sa.json")
        let json: [String: Any] = [
            "type": "service_account", "client_email": account.email, "private_key_id": account.keyID,
            "private_key": account.key.pkcs8PEMRepresentation,
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: file)
        let clock = ManualClock()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let url = "http://127.0.0.1:\(http.adminPort!)"
            let added = try await Self.run(["custom-tokens", "add-signer", "--service-account-file", file.path], url: url)
            #expect(added.status == 0, "\(added.errors)")
            #expect(added.output.contains("trusted \(account.email) key \(account.keyID)"))
            let listed = try await Self.run(["custom-tokens", "list-signers", "--json"], url: url)
            let signers =
                ((try? JSONSerialization.jsonObject(with: Data(listed.output.utf8))) as? [String: Any])?["signers"] as? [[String: Any]]
            let id = try #require(signers?.first?["signerId"] as? String)
            let api = API(http: http)
            let token = try account.token(uid: "cli-user", issuedAt: clock.now())
            #expect(try await api.client("signInWithCustomToken", ["token": token]).status == 200)
            #expect(try await Self.run(["custom-tokens", "remove-signer", id], url: url).status == 0)
            #expect(try await Self.run(["custom-tokens", "remove-signer", id], url: url).status == 66)
            let usage = try await Self.run(["custom-tokens", "add-signer", "--service-account", account.email], url: url)
            #expect(usage.status == 64)
            // A keys URL the server cannot fetch is refused there, with its reason.
            let unreachable = try await Self.run(
                ["custom-tokens", "add-signer", "--service-account", account.email, "--keys-url", "http://127.0.0.1:1/keys"], url: url)
            #expect(unreachable.status == 65)
            #expect(unreachable.errors.contains("INVALID_CONFIG"))
        }
    }

    @Test("idp: add an OIDC issuer with its secret from a file (never echoed), list, show, disable, remove; users link, find, unlink")
    func identityProviders() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("secret")
        try Data("cli-client-secret\n".utf8).write(to: secretFile)
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let url = "http://127.0.0.1:\(http.adminPort!)"
            let added = try await Self.run(
                [
                    "idp", "add-oidc", "oidc.corp", "--issuer", "https://issuer.example.com", "--client-id", "c", "--enabled",
                    "--code-flow",
                    "--client-secret-file", secretFile.path, "--trusted-domain", "corp.example",
                ], url: url)
            #expect(added.status == 0, "\(added.errors)")
            #expect(added.output.contains("oidc.corp") && added.output.contains("code") && !added.output.contains("cli-client-secret"))
            #expect(try await Self.run(["idp", "list"], url: url).output.contains("https://issuer.example.com"))
            #expect(try await Self.run(["idp", "disable", "oidc.corp"], url: url).output.contains("false"))
            let google = try await Self.run(["idp", "set-google", "--client-id", "web-client", "--enabled"], url: url)
            #expect(google.status == 0 && google.output.contains("web-client"), "\(google.errors)")
            #expect(try await Self.run(["idp", "set-google", "--client-id", "web-client-2"], url: url).output.contains("web-client-2"))

            _ = try await API(http: http).signUp("cli-fed@example.com")
            #expect(
                try await Self.run(["users", "link", "cli-fed@example.com", "--provider", "oidc.corp", "--raw-id", "s-1"], url: url).status
                    == 0)
            #expect(
                try await Self.run(["users", "find", "--provider", "oidc.corp", "--raw-id", "s-1"], url: url).output.contains(
                    "cli-fed@example.com"))
            #expect(try await Self.run(["users", "unlink", "cli-fed@example.com", "--provider", "oidc.corp"], url: url).status == 0)
            #expect(try await Self.run(["users", "find", "--provider", "oidc.corp", "--raw-id", "s-1"], url: url).status == 66)
            #expect(try await Self.run(["idp", "remove", "oidc.corp"], url: url).status == 0)
            #expect(try await Self.run(["idp", "show", "oidc.corp"], url: url).status == 66)

            // Decision 11: an OIDC provider proves no domain unless told; --trust-email-domains tells it.
            let plain = try await Self.run(
                ["idp", "add-oidc", "oidc.plain", "--issuer", "https://i.example", "--client-id", "c"], url: url)
            #expect(plain.output.contains("(default: none)"), "\(plain.output)")
            let any = try await Self.run(
                ["idp", "add-oidc", "oidc.any", "--issuer", "https://i.example", "--client-id", "c", "--trust-email-domains", "*"], url: url
            )
            let trustLine = any.output.split(separator: "\n").first { $0.hasPrefix("trusted email domains") }
            #expect(any.status == 0 && trustLine?.hasSuffix(" *") == true, "\(any.output)")
            let listed = try await Self.run(
                [
                    "idp", "add-oidc", "oidc.two", "--issuer", "https://i.example", "--client-id", "c", "--trust-email-domains",
                    "a.example, B.example",
                ],
                url: url)
            #expect(listed.output.contains("a.example, b.example"), "\(listed.output)")
            let both = try await Self.run(
                [
                    "idp", "add-oidc", "oidc.both", "--issuer", "https://i.example", "--client-id", "c", "--trust-email-domains", "*",
                    "--trust-none",
                ],
                url: url)
            #expect(both.status != 0 && both.errors.contains("give one of"))
        }
    }
}
