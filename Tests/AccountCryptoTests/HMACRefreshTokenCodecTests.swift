import AccountCore
import AccountCrypto
import AccountTesting
import Testing

@Suite("refresh tokens: HMAC under a per-session HKDF key")
struct HMACRefreshTokenCodecTests {
    let codec = HMACRefreshTokenCodec(
        masterKeys: ["k1": Array(repeating: 1, count: 32), "k2": Array(repeating: 2, count: 32)],
        currentKeyID: "k2"
    )
    let sessionID = TestBase64URL.encode((0..<16).map { UInt8($0 * 11) })
    let salt: [UInt8] = Array(repeating: 9, count: 16)

    @Test("a token decodes to its session id and generation, checked without the session, and verifies with its salt and key")
    func roundTrip() throws {
        #expect(codec.currentKeyID == "k2")
        for generation: Int64 in [0, 1, 41, .max] {
            let token = try codec.token(sessionID: sessionID, generation: generation, salt: salt, keyID: "k1")
            #expect(token.count == 100)
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            let decoded = try #require(codec.decode(token))
            #expect(decoded == DecodedRefreshToken(sessionID: sessionID, generation: generation, verified: true))
            #expect(codec.verify(token, salt: salt, keyID: "k1"))
        }
    }

    @Test("a flipped byte anywhere is refused by decode alone, before any session is read; another salt or key does not verify")
    func rejects() throws {
        let token = try codec.token(sessionID: sessionID, generation: 5, salt: salt, keyID: "k1")
        #expect(codec.verify(token, salt: Array(repeating: 8, count: 16), keyID: "k1") == false)
        #expect(codec.verify(token, salt: salt, keyID: "k2") == false)
        #expect(codec.verify(token, salt: salt, keyID: "nope") == false)
        let bytes = try #require(TestBase64URL.decode(token))
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 0x01
            let forged = TestBase64URL.encode(altered)
            #expect(codec.decode(forged) == nil, "byte \(index)")
            #expect(codec.verify(forged, salt: salt, keyID: "k1") == false)
        }
    }

    @Test("version 1 tokens (issued before) still decode, unverified, and verify against the session's salt; refused when switched off")
    func versionOne() throws {
        let token = try codec.versionOneToken(sessionID: sessionID, generation: 7, salt: salt, keyID: "k1")
        #expect(token.count == 76)
        #expect(codec.decode(token) == DecodedRefreshToken(sessionID: sessionID, generation: 7, verified: false))
        #expect(codec.verify(token, salt: salt, keyID: "k1"))
        #expect(codec.verify(token, salt: Array(repeating: 8, count: 16), keyID: "k1") == false)
        var bytes = try #require(TestBase64URL.decode(token))
        bytes[24] ^= 0x01  // generation 7 -> 6, MAC unchanged
        #expect(codec.decode(TestBase64URL.encode(bytes))?.generation == 6)
        #expect(codec.verify(TestBase64URL.encode(bytes), salt: salt, keyID: "k1") == false)

        let strict = HMACRefreshTokenCodec(masterKeys: ["k1": Array(repeating: 1, count: 32)], currentKeyID: "k1", acceptsVersion1: false)
        #expect(strict.decode(token) == nil)
        #expect(strict.verify(token, salt: salt, keyID: "k1") == false)
    }

    @Test("malformed tokens decode to nil and never verify")
    func garbage() throws {
        let token = try codec.token(sessionID: sessionID, generation: 1, salt: salt, keyID: "k1")
        var wrongVersion = try #require(TestBase64URL.decode(token))
        wrongVersion[0] = 1
        var unknownKey = try #require(TestBase64URL.decode(token))
        unknownKey[41] ^= 0xFF
        let samples = [
            "", "garbage", String(token.dropLast()), token + "A", token + "=", TestBase64URL.encode(wrongVersion),
            TestBase64URL.encode(unknownKey), String(token.dropLast()) + "*", String(repeating: "!", count: 100),
            String(repeating: "A", count: 76),
        ]
        for sample in samples {
            #expect(codec.decode(sample) == nil)
            #expect(codec.verify(sample, salt: salt, keyID: "k1") == false)
        }
    }

    @Test("making a token needs a 16-byte base64url session id, a 16-byte salt and a known key id")
    func tokenPreconditions() {
        #expect(throws: HMACRefreshTokenCodec.Failure.malformedSessionID) {
            try codec.token(sessionID: "short", generation: 0, salt: salt, keyID: "k1")
        }
        #expect(throws: HMACRefreshTokenCodec.Failure.malformedSessionID) {
            try codec.token(sessionID: sessionID + "A", generation: 0, salt: salt, keyID: "k1")
        }
        // 22 characters carry 132 bits: the last 4 must be zero.
        #expect(throws: HMACRefreshTokenCodec.Failure.malformedSessionID) {
            try codec.token(sessionID: "AAAAAAAAAAAAAAAAAAAAAB", generation: 0, salt: salt, keyID: "k1")
        }
        #expect(throws: HMACRefreshTokenCodec.Failure.malformedSalt) {
            try codec.token(sessionID: sessionID, generation: 0, salt: [1, 2, 3], keyID: "k1")
        }
        #expect(throws: HMACRefreshTokenCodec.Failure.unknownKeyID("k3")) {
            try codec.token(sessionID: sessionID, generation: 0, salt: salt, keyID: "k3")
        }
    }
}
