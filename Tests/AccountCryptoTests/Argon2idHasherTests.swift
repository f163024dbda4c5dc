import AccountCore
import AccountCrypto
import Testing

@Suite("argon2id through libsodium")
struct Argon2idHasherTests {
    let hasher = Argon2idHasher(parameters: .init(memoryKiB: 1024, iterations: 1), threads: 2)

    @Test("hashes to a PHC string that verifies only the right password")
    func roundTrip() async throws {
        let stored = try await hasher.hash("correct horse")
        let phc = String(decoding: stored.hash, as: UTF8.self)
        #expect(phc.hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"))
        #expect(try await hasher.verify("correct horse", against: stored))
        #expect(try await hasher.verify("correct horsf", against: stored) == false)
        #expect(try await hasher.dummyVerify("x") == false)
        // Two hashes of one password differ (random salt).
        #expect(try await hasher.hash("correct horse").hash != stored.hash)
    }

    @Test("the default parameters are at least OWASP's and weaker hashes ask for a rehash")
    func parameters() async throws {
        #expect(Argon2idHasher.Parameters.owasp.memoryKiB >= 19 * 1024)
        #expect(Argon2idHasher.Parameters.owasp.iterations >= 2)
        let weak = try await hasher.hash("pw")
        let strong = Argon2idHasher(parameters: .owasp, threads: 1)
        #expect(strong.needsRehash(weak))
        #expect(strong.needsRehash(StoredPassword(algorithm: "BCRYPT", hash: [1])))
    }
}
