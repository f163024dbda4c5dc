import AccountCore
import Crypto
import Testing

@testable import AccountCrypto

/// Issue 19 point 4: the verified-token cache is bounded in bytes as well as in entries.
@Suite("Verified-token cache bounds")
struct VerifiedTokenCacheTests {
    static func payload(expires: Int64) -> [String: JSONValue] { ["exp": .int(expires)] }

    @Test("tokens larger than the largest held are never cached; many mid-sized ones stay within the byte budget")
    func boundedInBytes() throws {
        let cache = VerifiedTokenCache(capacity: 100)
        #expect(cache.byteBudget == 100 * VerifiedTokenCache.bytesPerEntry)
        // An 800 KB token (a 600 KB display name) is not even hashed for the cache.
        #expect(cache.key([UInt8](repeating: 65, count: 800_000)) == nil)
        // 100 tokens of 8 KiB would be 800 KiB against a 200 KiB budget.
        for index in 0..<100 {
            let token = [UInt8](repeating: UInt8(index), count: VerifiedTokenCache.largestToken)
            let key = try #require(cache.key(token))
            cache.store(key, kid: "k", payload: Self.payload(expires: 2_000), bytes: token.count, now: 1_000)
            #expect(cache.bytes <= cache.byteBudget)
        }
        #expect(cache.count < 100)
        #expect(cache.count > 0)
        // Ordinary tokens still fill it to its entry capacity.
        let small = VerifiedTokenCache(capacity: 100)
        for index in 0..<100 {
            let token = Array("token-\(index)".utf8) + [UInt8](repeating: 1, count: 900)
            small.store(try #require(small.key(token)), kid: "k", payload: Self.payload(expires: 2_000), bytes: token.count, now: 1_000)
        }
        #expect(small.count == 100)
        #expect(small.bytes == 100 * 908 || small.bytes == (0..<100).reduce(0) { $0 + "token-\($1)".utf8.count + 900 })
    }
}
