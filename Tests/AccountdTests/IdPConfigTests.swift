import AccountPostgres
import AccountTesting
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

@testable import accountd

/// Provider configuration (federation-and-limits.md §B) over the admin listener of a real project.
@Suite("Identity provider configuration (§B)")
struct IdPConfigTests {
    static let base = "/v2/projects/acme-prod/oauthIdpConfigs"

    @Test("B1–B3: create, its defaults and output, and the refusals in the reference's order and words")
    func createAndRefuse() async throws {
        var configuration = productionConfiguration()
        configuration.projectNumber = "123456789012"
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let admin = http.admin
            func post(_ id: String?, _ body: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
                try await admin.post(Self.base + (id.map { "?oauthIdpConfigId=\($0)" } ?? ""), body, headers: [API.admin])
            }
            let created = try await post("oidc.corp", ["clientId": "c", "issuer": "https://issuer.example.com"])
            #expect(created.status == 200, "\(String(decoding: created.body, as: UTF8.self))")
            // Addressed by the project id; named, as Google names it, by the project number.
            #expect(created.string("name") == "projects/123456789012/oauthIdpConfigs/oidc.corp")
            #expect(created.json["enabled"] == nil, "false is omitted")
            #expect((created.json["responseType"] as? [String: Any])?["idToken"] as? Bool == true)

            let exists = try await post("oidc.corp", ["clientId": "c", "issuer": "https://issuer.example.com"])
            #expect(
                exists.status == 409
                    && exists.errorMessage == "CONFIGURATION_EXISTS : The OAuthIdpConfig already exists with config_id: oidc.corp")
            #expect((exists.json["error"] as? [String: Any])?["status"] as? String == "ALREADY_EXISTS")
            #expect(try await post(nil, ["clientId": "c"]).errorCode == "MISSING_CONFIG_ID")
            for bad in ["run-x", "oidc.A", "oidc.a", "oidc.a-", "oidc.a/b"] {
                #expect(
                    try await post(bad, ["clientId": "c", "issuer": "https://i.example"]).errorMessage
                        == "INVALID_CONFIG_ID : Oauth_idp_config_id must start with 'oidc.' and can only have alphanumeric characters, "
                        + "hyphens, underscores or periods. The part after 'oidc.' must also start with a lowercase letter, end with an "
                        + "alphanumeric character, and have at least 2 characters.", "\(bad)")
            }
            #expect(
                try await post("oidc.noclient", ["issuer": "https://i.example"]).errorMessage
                    == "MISSING_OAUTH_CLIENT_ID : Client_id in OAuthIdpConfig cannot be empty.")
            #expect(try await post("oidc.noissuer", ["clientId": "c"]).errorCode == "MISSING_ISSUER")
            for issuer in ["http://issuer.example.com", "http://127.0.0.1:9", "issuer.example.com", "https://i.example/#x"] {
                #expect(
                    try await post("oidc.badissuer", ["clientId": "c", "issuer": issuer]).errorMessage
                        == "INVALID_ISSUER : Issuer in OAuthIdpConfig should be a valid URL.", "\(issuer)")
            }
            #expect(
                try await post("oidc.code", ["clientId": "c", "issuer": "https://i.example", "responseType": ["code": true]]).errorMessage
                    == "INVALID_CONFIG : client_secret cannot be empty for code flow.")
            #expect(
                try await post("oidc.opts", ["clientId": "c", "issuer": "https://i.example", "accountdOptions": ["bogus": 1]]).errorMessage
                    == "INVALID_CONFIG : accountdOptions.bogus is not a valid field")
            // Built-in providers have their own collection and ids.
            let google = try await admin.post(
                "/v2/projects/acme-prod/defaultSupportedIdpConfigs?idpId=google.com", ["clientId": "web-client", "enabled": true],
                headers: [API.admin])
            #expect(
                google.string("name") == "projects/123456789012/defaultSupportedIdpConfigs/google.com"
                    && google.json["enabled"] as? Bool == true)
            #expect(
                try await admin.post(
                    "/v2/projects/acme-prod/defaultSupportedIdpConfigs?idpId=facebook.com", ["clientId": "x"], headers: [API.admin]
                )
                .errorMessage == "INVALID_CONFIG_ID : facebook.com is not supported by this server.")
            let supported = try await admin.get("/v2/defaultSupportedIdps", headers: [API.admin])
            #expect((supported.json["defaultSupportedIdps"] as? [[String: String]])?.map { $0["idpId"] } == ["apple.com", "google.com"])
            // Clients never reach it, on either listener.
            #expect(try await http.get("\(Self.base)?key=\(API.key)").status == 403)
        }
    }

    @Test("B4: a client secret is sealed at rest, never answered, logged or audited by value")
    func secretsSealed() async throws {
        let database = try await TestDatabase.createMigrated()
        let secret = "very-secret-client-secret-value"
        let rotated = "rotated-secret-client-secret-value"
        // The built server of a real project, logging everything (trace) to a file read afterwards.
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("idp-log-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        let server = try await RunningServer(database: database, environment: ["LOG_LEVEL": "trace"], logFile: logFile)
        let admin = server.http.admin
        let bearer = ("Authorization", "Bearer \(RunningServer.adminToken)")
        let created = try await admin.post(
            "\(Self.base)?oauthIdpConfigId=oidc.sealed",
            ["clientId": "c", "issuer": "https://i.example", "responseType": ["code": true], "clientSecret": secret], headers: [bearer])
        #expect(created.status == 200)
        #expect(!String(decoding: created.body, as: UTF8.self).contains(secret))
        #expect((created.json["accountdOptions"] as? [String: Any])?["clientSecretSet"] as? Bool == true)
        let patched = try await admin.send(
            .PATCH, "\(Self.base)/oidc.sealed?updateMask=clientSecret", body: Data(#"{"clientSecret":"\#(rotated)"}"#.utf8),
            headers: [bearer, ("Content-Type", "application/json")])
        #expect(patched.status == 200)
        for reply in [
            patched, try await admin.get("\(Self.base)/oidc.sealed", headers: [bearer]), try await admin.get(Self.base, headers: [bearer]),
        ] {
            let body = String(decoding: reply.body, as: UTF8.self)
            #expect(reply.status == 200 && !body.contains(secret) && !body.contains(rotated))
        }
        // A refused write that carried a secret is not logged with it either.
        let refused = try await admin.post(
            "\(Self.base)?oauthIdpConfigId=oidc.sealed", ["clientId": "c", "issuer": "https://i.example", "clientSecret": secret],
            headers: [bearer])
        #expect(refused.status == 409)
        try await server.stop()
        let log = try String(contentsOfFile: logFile, encoding: .utf8)
        #expect(log.contains("oauthIdpConfigs"), "the trace log records the requests (or this check proves nothing)")
        #expect(!log.contains(secret) && !log.contains(rotated))
        try await TestDatabase.withClient(database) { client in
            let rows = try await client.query(
                "SELECT encode(client_secret_sealed, 'escape') FROM idp_configs WHERE provider_id = 'oidc.sealed'",
                logger: TestDatabase.logger)
            for sealed in try rows.decode(String.self) { #expect(!sealed.contains(secret)) }
            let audit = try await client.query("SELECT details::text FROM audit_events", logger: TestDatabase.logger)
            var events = 0
            for details in try audit.decode(String.self) {
                events += 1
                #expect(!details.contains(secret))
            }
            #expect(events >= 1)
        }
    }

    @Test("B5: an empty list is {}; update by mask (a masked field absent is cleared); delete, then 404")
    func listUpdateDelete() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            let admin = http.admin
            let empty = try await admin.get(Self.base, headers: [API.admin])
            #expect(empty.status == 200 && empty.json.isEmpty)
            for id in ["oidc.aa", "oidc.bb", "oidc.cc"] {
                _ = try await admin.post(
                    "\(Self.base)?oauthIdpConfigId=\(id)", ["clientId": "c", "issuer": "https://i.example", "displayName": id],
                    headers: [API.admin])
            }
            let first = try await admin.get("\(Self.base)?pageSize=2", headers: [API.admin])
            #expect((first.json["oauthIdpConfigs"] as? [[String: Any]])?.count == 2)
            let token = try #require(first.string("nextPageToken"))
            let second = try await admin.get("\(Self.base)?pageSize=2&pageToken=\(token)", headers: [API.admin])
            #expect((second.json["oauthIdpConfigs"] as? [[String: Any]])?.map { $0["displayName"] as? String } == ["oidc.cc"])
            #expect(try await admin.get("\(Self.base)?pageToken=%25%25", headers: [API.admin]).errorCode == "INVALID_PAGE_SELECTION")

            let patched = try await admin.send(
                .PATCH, "\(Self.base)/oidc.aa?updateMask=enabled,displayName",
                body: Data(#"{"enabled":true}"#.utf8), headers: [API.admin, ("Content-Type", "application/json")])
            #expect(patched.json["enabled"] as? Bool == true && patched.json["displayName"] == nil)
            let badMask = try await admin.send(
                .PATCH, "\(Self.base)/oidc.aa?updateMask=colour", body: Data("{}".utf8), headers: [API.admin])
            #expect(badMask.errorMessage == "INVALID_CONFIG : colour is not a valid field")
            #expect(try await admin.send(.DELETE, "\(Self.base)/oidc.aa", headers: [API.admin]).status == 200)
            let gone = try await admin.get("\(Self.base)/oidc.aa", headers: [API.admin])
            #expect(gone.status == 404 && gone.errorCode == "CONFIGURATION_NOT_FOUND")
            #expect(try await admin.send(.PATCH, "\(Self.base)/oidc.zz", body: Data("{}".utf8), headers: [API.admin]).status == 404)
        }
    }
}
