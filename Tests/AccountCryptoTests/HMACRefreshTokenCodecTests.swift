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

    @Test("a token decodes to its session id and generation and verifies with its salt and key")
    func roundTrip() throws {
        #expect(codec.currentKeyID == "k2")
        for generation: Int64 in [0, 1, 41, .max] {
            let token = try codec.token(sessionID: sessionID, generation: generation, salt: salt, keyID: "k1")
            #expect(token.count == 76)
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            let decoded = try #require(codec.decode(token))
            #expect(decoded.sessionID == sessionID)
            #expect(decoded.generation == generation)
            #expect(codec.verify(token, salt: salt, keyID: "k1"))
        }
    }

    @Test("another salt, key, generation or a flipped byte does not verify")
    func rejects() throws {
        let token = try codec.token(sessionID: sessionID, generation: 5, salt: salt, keyID: "k1")
        #expect(codec.verify(token, salt: Array(repeating: 8, count: 16), keyID: "k1") == false)
        #expect(codec.verify(token, salt: salt, keyID: "k2") == false)
        #expect(codec.verify(token, salt: salt, keyID: "nope") == false)

        var bytes = try #require(TestBase64URL.decode(token))
        bytes[24] ^= 0x01  // generation 5 -> 4, MAC unchanged
        let otherGeneration = TestBase64URL.encode(bytes)
        #expect(codec.decode(otherGeneration)?.generation == 4)
        #expect(codec.verify(otherGeneration, salt: salt, keyID: "k1") == false)

        for index in [1, 30, 56] {
            var altered = try #require(TestBase64URL.decode(token))
            altered[index] ^= 0x80
            #expect(codec.verify(TestBase64URL.encode(altered), salt: salt, keyID: "k1") == false)
        }
    }

    @Test("malformed tokens decode to nil and never verify")
    func garbage() throws {
        let token = try codec.token(sessionID: sessionID, generation: 1, salt: salt, keyID: "k1")
        var wrongVersion = try #require(TestBase64URL.decode(token))
        wrongVersion[0] = 2
        let samples = [
            "", "garbage", String(token.dropLast()), token + "A", token + "=", TestBase64URL.encode(wrongVersion),
            String(token.dropLast()) + "*",
            String(repeating: "!", count: 76),
        ]
        for sample in samples {
            #expect(codec.decode(sample) == nil)
            #expect(codec.verify(sample, salt: salt, keyID: "k1") == false)
        }
    }

    @Test("making a token needs a 16-byte base64url session id and a known key id")
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
        #expect(throws: HMACRefreshTokenCodec.Failure.unknownKeyID("k3")) {
            try codec.token(sessionID: sessionID, generation: 0, salt: salt, keyID: "k3")
        }
    }
}
