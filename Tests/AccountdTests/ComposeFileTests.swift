import AccountTesting
import Foundation
import Testing
import Yams

/// docker-compose.yml cannot run here (no Docker engine); this keeps it well-formed and wired.
@Suite("docker-compose.yml")
struct ComposeFileTests {
    @Test("PostgreSQL 15 with a volume and health check; accountd built from the Dockerfile, wired by DATABASE_URL")
    func composeIsWired() throws {
        let root = TestDatabase.migrationsDirectory.deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let compose = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])

        let postgres = try #require(services["postgres"] as? [String: Any])
        #expect((postgres["image"] as? String)?.hasPrefix("postgres:15") == true)
        #expect(postgres["healthcheck"] is [String: Any])
        let volumes = try #require(postgres["volumes"] as? [String])
        #expect(volumes.contains { $0.hasSuffix(":/var/lib/postgresql/data") })
        #expect((compose["volumes"] as? [String: Any])?.keys.isEmpty == false)

        let accountd = try #require(services["accountd"] as? [String: Any])
        let build = try #require(accountd["build"] as? [String: Any])
        let dockerfile = (build["dockerfile"] as? String) ?? "Dockerfile"
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(dockerfile).path))
        let environment = try #require(accountd["environment"] as? [String: Any])
        let databaseURL = try #require(environment["DATABASE_URL"] as? String)
        #expect(databaseURL.contains("@postgres:5432/"))
        // Published on loopback unless the operator says otherwise; PostgreSQL not at all.
        let ports = try #require(accountd["ports"] as? [String])
        #expect(ports == ["${ACCOUNTD_PUBLISH_ADDRESS:-127.0.0.1}:9099:9099"])
        #expect(postgres["ports"] == nil)
        // The admin listener is never published; it stays on the container's loopback by default.
        #expect(!ports.contains { $0.contains("9098") } && accountd["expose"] == nil)
        #expect(environment["ACCOUNTD_ADMIN_HOST"] as? String == "${ACCOUNTD_ADMIN_HOST:-127.0.0.1}")
        // A production project must be able to choose its mail transport through compose.
        #expect(environment["ACCOUNTD_MAIL_TRANSPORT"] != nil && environment["ACCOUNTD_TRUSTED_PROXIES"] != nil)
        let dependsOn = try #require(accountd["depends_on"] as? [String: Any])
        #expect((dependsOn["postgres"] as? [String: Any])?["condition"] as? String == "service_healthy")
    }

    @Test("the Dockerfile builds release in a Swift 6.3 stage and runs as a non-root user")
    func dockerfile() throws {
        let root = TestDatabase.migrationsDirectory.deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(text.contains("FROM swift:6.3"))
        #expect(text.contains("-c release"))
        #expect(text.components(separatedBy: "\nFROM ").count >= 2)
        #expect(text.contains("\nUSER "))
        #expect(text.contains("migrations"))
    }
}
