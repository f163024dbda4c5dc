import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Testing

/// The signing-key port (`SigningKeyStore`, identity-toolkit.md §3.6), against PostgreSQL and against the
/// in-memory store the unit tests use: the fake is held to the contract the real store keeps.
@Suite("SigningKeyStore contract")
struct SigningKeyStoreContractTests {
    enum Kind: String, CaseIterable, Sendable {
        case postgres, memory
    }

    let t0 = StoreContract.t0

    static func withStore(_ kind: Kind, _ body: @escaping @Sendable (any SigningKeyStore) async throws -> Void) async throws {
        switch kind {
        case .memory:
            try await body(MemorySigningKeyStore())
        case .postgres:
            let url = try await TestDatabase.createMigrated()
            try await TestDatabase.withClient(url) { client in
                try await body(PostgresSigningKeyStore(database: client, logger: TestDatabase.logger))
            }
        }
    }

    func key(_ kid: String, _ state: SigningKeyRecord.State, at instant: Date) -> SigningKeyRecord {
        SigningKeyRecord(
            kid: kid, publicKeyDER: Array(kid.utf8), certificatePEM: "PEM \(kid)", sealedPrivateKey: [1, 2, 3], kekID: "kek", state: state,
            createdAt: instant, activatedAt: state == .current ? instant : nil)
    }

    @Test("one current key: a second current is a conflict, a next key is published beside it", arguments: Kind.allCases)
    func oneCurrent(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(key("a", .current, at: t0))
            await #expect(throws: SigningKeyConflict.self) { try await store.insert(key("b", .current, at: t0)) }
            await #expect(throws: SigningKeyConflict.self) { try await store.insert(key("a", .next, at: t0)) }
            try await store.insert(key("n", .next, at: t0 + 1))
            let published = try await store.publishedKeys(at: t0 + 2)
            #expect(published.map(\.kid) == ["a", "n"])
            #expect(published.first?.sealedPrivateKey == [1, 2, 3] && published.first?.publicKeyDER == Array("a".utf8))
        }
    }

    @Test("promotion retires the current key until its removal instant and makes the next one current, once", arguments: Kind.allCases)
    func promotion(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(key("a", .current, at: t0))
            try await store.insert(key("n", .next, at: t0 + 1))
            try await store.promote(kid: "n", at: t0 + 10, retiredRemoveAfter: t0 + 100)
            let after = try await store.publishedKeys(at: t0 + 11)
            #expect(after.first { $0.kid == "a" }?.state == .retired && after.first { $0.kid == "a" }?.removeAfter == t0 + 100)
            #expect(after.first { $0.kid == "n" }?.state == .current && after.first { $0.kid == "n" }?.activatedAt == t0 + 10)
            // Promoting the current key again changes nothing; a retired or unknown one is another replica's move.
            try await store.promote(kid: "n", at: t0 + 20, retiredRemoveAfter: t0 + 200)
            #expect(try await store.publishedKeys(at: t0 + 21).first { $0.kid == "n" }?.activatedAt == t0 + 10)
            await #expect(throws: SigningKeyConflict.self) { try await store.promote(kid: "a", at: t0 + 30, retiredRemoveAfter: t0 + 300) }
            await #expect(throws: SigningKeyConflict.self) {
                try await store.promote(kid: "nobody", at: t0 + 30, retiredRemoveAfter: t0 + 300)
            }
            // A retired key is published until its removal instant, not after.
            #expect(try await store.publishedKeys(at: t0 + 100).map(\.kid) == ["n"])
        }
    }
}
