import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

/// A sealer for the contract: reversible, bound to its context, never the identity (so a test can
/// see that what is stored is not the secret).
struct TestSealer: SecretSealing {
    let kekID = "test-kek"
    func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        let pad = Array(context.utf8) + [0x5A]
        return plaintext.enumerated().map { $0.element ^ pad[$0.offset % pad.count] }
    }
    func open(_ sealed: [UInt8], context: String) throws -> [UInt8] { try seal(sealed, context: context) }
}

/// The provider-configuration port (`IdPConfigStore`, federation-and-limits.md §B), against PostgreSQL.
@Suite("IdPConfigStore contract")
struct IdPConfigStoreContractTests {
    let t0 = StoreContract.t0

    static func withStore(_ body: @escaping @Sendable (any IdPConfigStore, ConnectionPool) async throws -> Void) async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await body(
                PostgresIdPConfigStore(database: client, logger: TestDatabase.logger, sealer: TestSealer(), project: "p"), client)
        }
    }

    func config(_ id: String, secret: String? = nil) -> IdPConfig {
        var options = IdPOptions()
        options.trustedEmailDomains = ["corp.example"]
        return IdPConfig(
            providerID: id, displayName: "Corp", enabled: true, clientID: "client-\(id)",
            issuer: id.hasPrefix("oidc.") ? "https://i.example" : nil,
            codeFlow: secret != nil, clientSecret: secret, options: options, createdAt: t0, updatedAt: t0)
    }

    @Test("a config round-trips, secret included, which is stored sealed; creating it twice is CONFIGURATION_EXISTS")
    func roundTrip() async throws {
        try await Self.withStore { (store, client) async throws in
            try await store.createIdPConfig(config("oidc.corp", secret: "very-secret-value"))
            let read = try #require(try await store.idpConfig("oidc.corp"))
            #expect(read == config("oidc.corp", secret: "very-secret-value"))
            #expect(try await store.idpConfig("oidc.none") == nil)
            let stored = try await client.query("SELECT client_secret_sealed FROM idp_configs").first?.decode(Data.self)
            #expect(stored != nil && !String(decoding: stored!, as: UTF8.self).contains("very-secret"))
            #expect(
                await StoreContract.refusal { try await store.createIdPConfig(config("oidc.corp")) } == .configurationExists)
        }
    }

    @Test("update replaces, delete removes once; unknown ids are CONFIGURATION_NOT_FOUND or false; lists page by id per collection")
    func updateDeleteList() async throws {
        try await Self.withStore { (store, _) async throws in
            for id in ["oidc.b", "oidc.a", "google.com", "oidc.c"] { try await store.createIdPConfig(config(id)) }
            var changed = config("oidc.a")
            changed.enabled = false
            changed.clientID = "other"
            try await store.updateIdPConfig(changed)
            #expect(try await store.idpConfig("oidc.a") == changed)
            #expect(await StoreContract.refusal { try await store.updateIdPConfig(config("oidc.zz")) } == .configurationNotFound)
            #expect(try await store.idpConfigs(defaultSupported: false, after: nil, limit: 2).map(\.providerID) == ["oidc.a", "oidc.b"])
            #expect(try await store.idpConfigs(defaultSupported: false, after: "oidc.b", limit: 2).map(\.providerID) == ["oidc.c"])
            #expect(try await store.idpConfigs(defaultSupported: true, after: nil, limit: 10).map(\.providerID) == ["google.com"])
            #expect(try await store.deleteIdPConfig("oidc.b"))
            #expect(try await store.deleteIdPConfig("oidc.b") == false)
            #expect(try await store.idpConfig("oidc.b") == nil)
        }
    }
}

/// The custom-token signer port (`CustomTokenSignerStore`, federation-and-limits.md §C.2), against PostgreSQL.
@Suite("CustomTokenSignerStore contract")
struct CustomTokenSignerStoreContractTests {
    let t0 = StoreContract.t0

    func signer(_ id: String, project: String = "p", email: String = "sa@x.iam.gserviceaccount.com", spki: [UInt8]) -> CustomTokenSigner {
        CustomTokenSigner(
            signerID: id, project: project, email: email, keyID: "kid-\(id)", spki: spki, source: "publicKeyPem", createdAt: t0)
    }

    @Test(
        "signers are found by service account across projects and by project, oldest first; a key twice in a project is CONFIGURATION_EXISTS, all or nothing"
    )
    func signers() async throws {
        try await StoreContract.withStore { store in
            let store: any CustomTokenSignerStore = store
            try await store.addSigners([signer("s1", spki: [1]), signer("s2", spki: [2])])
            try await store.addSigners([signer("s3", project: "q", spki: [1])])
            #expect(try await store.signers(project: "p").map(\.signerID) == ["s1", "s2"])
            #expect(Set(try await store.signers(email: "sa@x.iam.gserviceaccount.com").map(\.signerID)) == ["s1", "s2", "s3"])
            #expect(try await store.signers(project: "p").first == signer("s1", spki: [1]))
            #expect(
                await StoreContract.refusal { try await store.addSigners([signer("s4", spki: [4]), signer("s5", spki: [2])]) }
                    == .configurationExists)
            #expect(try await store.signers(project: "p").count == 2, "the batch wrote nothing")
            #expect(try await store.removeSigner(project: "p", signerID: "s1"))
            #expect(try await store.removeSigner(project: "p", signerID: "s1") == false)
            #expect(try await store.removeSigner(project: "p", signerID: "s3") == false, "another project's")
            #expect(try await store.signers(project: "p").map(\.signerID) == ["s2"])
        }
    }
}
