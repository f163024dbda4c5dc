import AccountCore
import AccountCrypto
import AccountTesting
import Foundation
import Testing

@Suite("the memory signing-key store keeps the store contract")
struct MemorySigningKeyStoreTests {
    let store = MemorySigningKeyStore()
    let start = Date(timeIntervalSince1970: 1_750_000_000)

    func record(_ kid: String, _ state: SigningKeyRecord.State) -> SigningKeyRecord {
        SigningKeyRecord(
            kid: kid, publicKeyDER: [1], certificatePEM: "", sealedPrivateKey: [2], kekID: "k", state: state, createdAt: start
        )
    }

    @Test("a second current key, or a repeated kid, is a conflict")
    func oneCurrentKey() async throws {
        try await store.insert(record("a", .current))
        await #expect(throws: SigningKeyConflict.self) { try await store.insert(record("b", .current)) }
        await #expect(throws: SigningKeyConflict.self) { try await store.insert(record("a", .next)) }
        try await store.insert(record("b", .next))
        #expect(await store.publishedKeys(at: start).map(\.kid) == ["a", "b"])
    }

    @Test("promote retires the current key until removeAfter and activates the next one")
    func promote() async throws {
        try await store.insert(record("a", .current))
        try await store.insert(record("b", .next))
        try await store.promote(kid: "b", at: start + 10, retiredRemoveAfter: start + 100)
        let records = await store.publishedKeys(at: start + 99)
        #expect(records.map(\.state) == [.retired, .current])
        #expect(records[0].retiredAt == start + 10 && records[0].removeAfter == start + 100)
        #expect(records[1].activatedAt == start + 10)
        #expect(await store.publishedKeys(at: start + 100).map(\.kid) == ["b"])

        // Promoting the current key again is a no-op; a retired or unknown key is a conflict.
        try await store.promote(kid: "b", at: start + 20, retiredRemoveAfter: start + 200)
        #expect(await store.publishedKeys(at: start + 99).map(\.state) == [.retired, .current])
        await #expect(throws: SigningKeyConflict.self) {
            try await store.promote(kid: "a", at: start + 20, retiredRemoveAfter: start + 200)
        }
        await #expect(throws: SigningKeyConflict.self) {
            try await store.promote(kid: "zz", at: start + 20, retiredRemoveAfter: start + 200)
        }
    }
}
