import AccountCore
import AccountCrypto
import AccountTesting
import Crypto
import Foundation
import JWTKit
import SwiftASN1
import Testing
import X509
import _CryptoExtras

@Suite("RS256 key ring over the memory key store")
struct RS256KeyRingTests {
    let store = MemorySigningKeyStore()
    let sealer = KeySealer(keyEncryptionKey: Array(repeating: 42, count: 32))
    let clock = TestClock()

    func makeRing(sealer: KeySealer? = nil, verifiedTokenCapacity: Int = 10_000) -> RS256KeyRing {
        let clock = self.clock
        return RS256KeyRing(
            store: store, sealer: sealer ?? self.sealer, now: { clock.now() }, verifiedTokenCapacity: verifiedTokenCapacity)
    }

    func claims(subject: String = "user-1") -> [String: JSONValue] {
        let issuedAt = Int64(Date().timeIntervalSince1970)
        return [
            "iss": .string("https://securetoken.google.com/demo"), "aud": .string("demo"),
            "sub": .string(subject), "iat": .int(issuedAt), "exp": .int(issuedAt + 3600),
            "email_verified": .bool(false), "firebase": .object(["identities": .object([:])]),
        ]
    }

    func header(of token: String) throws -> [String: JSONValue] {
        let part = try #require(token.split(separator: ".").first)
        return try JSONDecoder().decode([String: JSONValue].self, from: Data(try #require(TestBase64URL.decode(part))))
    }

    func kid(of token: String) throws -> String? {
        try header(of: token)["kid"]?.stringValue
    }

    @Test("ensureCurrentKey creates exactly one sealed current key, once")
    func createsOneKey() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        try await ring.ensureCurrentKey()
        let records = await store.allRecords
        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record.state == .current)
        #expect(record.kekID == sealer.kekID)
        #expect(record.kid == RS256KeyRing.kid(forPublicKeyDER: record.publicKeyDER))
        #expect(record.kid.count == 22)
        let privateDER = try sealer.open(record.sealedPrivateKey)
        #expect(!record.sealedPrivateKey.contains(subsequence: privateDER))
        #expect(try _RSA.Signing.PrivateKey(derRepresentation: privateDER).keySizeInBits == 2048)

        let published = try await ring.publishedKeys()
        #expect(published.map(\.kid) == [record.kid])
        #expect(published.first?.exponent == "AQAB")
        #expect(published.first?.certificatePEM == record.certificatePEM)
    }

    @Test("two replicas racing over an empty store end with one current key and sign with it")
    func racingReplicas() async throws {
        let replicas = [makeRing(), makeRing()]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for ring in replicas { group.addTask { try await ring.ensureCurrentKey() } }
            try await group.waitForAll()
        }
        let records = await store.allRecords
        #expect(records.count == 1)
        #expect(records.filter { $0.state == .current }.count == 1)
        for ring in replicas {
            let token = try await ring.sign(claims: claims())
            #expect(try kid(of: token) == records.first?.kid)
            for verifier in replicas { #expect(try await verifier.verify(token)["sub"] == .string("user-1")) }
        }
    }

    @Test("a signed token has the exact header, verifies with the ring and with JWTKit")
    func signAndVerify() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let claims = claims(subject: "abc")
        let token = try await ring.sign(claims: claims)
        let kid = try #require(await ring.publishedKeys().first?.kid)
        let encodedHeader = try #require(token.split(separator: ".").first)
        #expect(
            TestBase64URL.decode(encodedHeader).map { String(decoding: $0, as: UTF8.self) }
                == #"{"alg":"RS256","kid":"\#(kid)","typ":"JWT"}"#)
        #expect(!token.contains("="))
        #expect(try await ring.verify(token) == claims)

        let jwks = try await [
            "keys": ring.publishedKeys().map {
                ["kty": "RSA", "alg": "RS256", "use": "sig", "kid": $0.kid, "n": $0.modulus, "e": $0.exponent]
            }
        ]
        let keyCollection = JWTKeyCollection()
        try await keyCollection.add(jwksJSON: String(decoding: try JSONEncoder().encode(jwks), as: UTF8.self))
        let payload = try await keyCollection.verify(token, as: IDTokenPayload.self)
        #expect(payload.sub.value == "abc")

        let parts = token.split(separator: ".")
        let forged = [parts[0], Substring(TestBase64URL.encode(Array(#"{"sub":"x","exp":9999999999}"#.utf8))), parts[2]]
        await #expect(throws: (any Error).self) {
            try await keyCollection.verify(forged.joined(separator: "."), as: IDTokenPayload.self)
        }
    }

    @Test("tampered, unsigned, HS256, unknown-kid and garbage tokens are INVALID_ID_TOKEN")
    func rejects() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let token = try await ring.sign(claims: claims())
        let parts = token.split(separator: ".").map(String.init)
        let kid = try #require(try self.kid(of: token))
        let otherPayload = TestBase64URL.encode(Array(#"{"sub":"admin"}"#.utf8))
        func encode(_ json: String) -> String { TestBase64URL.encode(Array(json.utf8)) }
        let hmacKey = SymmetricKey(data: Array(try #require(await ring.publishedKeys().first?.certificatePEM).utf8))
        let hsInput = encode(#"{"alg":"HS256","kid":"\#(kid)","typ":"JWT"}"#) + "." + parts[1]
        let hsSignature = HMAC<SHA256>.authenticationCode(for: Array(hsInput.utf8), using: hmacKey)

        let samples = [
            parts[0] + "." + otherPayload + "." + parts[2],
            encode(#"{"alg":"none","kid":"\#(kid)","typ":"JWT"}"#) + "." + parts[1] + ".",
            encode(#"{"alg":"none","kid":"\#(kid)","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2],
            hsInput + "." + TestBase64URL.encode(hsSignature),
            encode(#"{"alg":"RS256","kid":"AAAAAAAAAAAAAAAAAAAAAA","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2],
            encode(#"{"alg":"RS256","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2],
            parts[0] + "." + parts[1] + "." + parts[2] + "A",
            parts[0] + "." + parts[1] + "." + parts[2] + ".",
            parts[0] + "." + parts[1],
            parts[0] + "=." + parts[1] + "." + parts[2],
            "", "...", "garbage", "a.b.c",
        ]
        for sample in samples {
            await #expect(throws: AccountError(.invalidIDToken)) { try await ring.verify(sample) }
        }
        #expect(try await ring.verify(token)["sub"] == .string("user-1"))
    }

    @Test("after rotateNow new tokens carry the new kid and old ones verify until the old key is removed")
    func rotation() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let oldToken = try await ring.sign(claims: claims())
        let oldKID = try kid(of: oldToken)
        let newKID = try await ring.rotateNow(retiredLifetime: 3900)
        let newToken = try await ring.sign(claims: claims())
        #expect(try kid(of: newToken) == newKID)
        #expect(newKID != oldKID)
        #expect(try await ring.verify(oldToken)["sub"] == .string("user-1"))
        #expect(try await ring.verify(newToken)["sub"] == .string("user-1"))
        #expect(Set(try await ring.publishedKeys().map(\.kid)) == Set([oldKID, newKID].compactMap { $0 }))

        let states = Dictionary(uniqueKeysWithValues: await store.allRecords.map { ($0.kid, $0.state) })
        #expect(states == [try #require(oldKID): .retired, newKID: .current])

        clock.advance(3901)
        await #expect(throws: AccountError(.invalidIDToken)) { try await ring.verify(oldToken) }
        #expect(try await ring.publishedKeys().map(\.kid) == [newKID])
        #expect(try await ring.verify(newToken)["sub"] == .string("user-1"))
    }

    @Test("a replica learns a rotation from an unknown kid (at most once a second) and from its periodic reload")
    func replicasConverge() async throws {
        let first = makeRing()
        let second = makeRing()
        try await first.ensureCurrentKey()
        try await second.ensureCurrentKey()
        let oldKID = try kid(of: try await second.sign(claims: claims()))

        let newKID = try await first.rotateNow(retiredLifetime: 3900)
        let newToken = try await first.sign(claims: claims())
        // The second replica loaded less than a second ago: it does not reload for an unknown kid yet.
        await #expect(throws: AccountError(.invalidIDToken)) { try await second.verify(newToken) }
        clock.advance(1)
        #expect(try await second.verify(newToken)["sub"] == .string("user-1"))

        let lagging = makeRing()
        try await lagging.ensureCurrentKey()
        #expect(try kid(of: try await lagging.sign(claims: claims())) == newKID)
        let fresh = try await first.rotateNow(retiredLifetime: 3900)
        #expect(try kid(of: try await lagging.sign(claims: claims())) == newKID)
        clock.advance(30)
        #expect(try kid(of: try await lagging.sign(claims: claims())) == fresh)
        #expect(fresh != oldKID)
    }

    @Test("promoteDueKeys promotes a next key only after it has been published long enough")
    func promoteDueKeys() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let currentKID = try kid(of: try await ring.sign(claims: claims()))
        let nextKID = try await ring.addNextKey()
        #expect(try await ring.publishedKeys().map(\.kid).contains(nextKID))
        #expect(try kid(of: try await ring.sign(claims: claims())) == currentKID)

        clock.advance(3599)
        try await ring.promoteDueKeys(publishedFor: 3600, retiredLifetime: 3900)
        #expect(try kid(of: try await ring.sign(claims: claims())) == currentKID)

        clock.advance(1)
        try await ring.promoteDueKeys(publishedFor: 3600, retiredLifetime: 3900)
        #expect(try kid(of: try await ring.sign(claims: claims())) == nextKID)
        let retired = try #require(await store.allRecords.first { $0.kid == currentKID })
        #expect(retired.state == .retired)
        #expect(retired.removeAfter == clock.now() + 3900)
        // Nothing more is due; a second promotion changes nothing.
        try await ring.promoteDueKeys(publishedFor: 3600, retiredLifetime: 3900)
        #expect(try kid(of: try await ring.sign(claims: claims())) == nextKID)
    }

    @Test("the certificate is a self-signed X.509 for the published key")
    func certificate() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let published = try #require(try await ring.publishedKeys().first)
        #expect(published.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        let certificate = try Certificate(pemEncoded: published.certificatePEM)
        let certificateKey = try #require(_RSA.Signing.PublicKey(certificate.publicKey))
        let jwkKey = try _RSA.Signing.PublicKey(
            n: try #require(TestBase64URL.decode(published.modulus)),
            e: try #require(TestBase64URL.decode(published.exponent))
        )
        #expect(certificateKey.derRepresentation == jwkKey.derRepresentation)
        #expect(RS256KeyRing.kid(forPublicKeyDER: Array(certificateKey.derRepresentation)) == published.kid)
        #expect(certificate.subject == certificate.issuer)
        #expect(certificate.subject.description.contains("CN=securetoken@accountd"))
        #expect(certificate.signatureAlgorithm == .sha256WithRSAEncryption)
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(certificate.notValidBefore <= clock.now() && certificate.notValidAfter > clock.now() + 365 * 86400)
    }

    @Test("a server with another KEK verifies tokens but cannot sign")
    func otherKEK() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let token = try await ring.sign(claims: claims())
        let stranger = makeRing(sealer: KeySealer(keyEncryptionKey: Array(repeating: 1, count: 32)))
        try await stranger.ensureCurrentKey()
        #expect(try await stranger.verify(token)["sub"] == .string("user-1"))
        await #expect(throws: RS256KeyRing.KeyUnavailable.self) { try await stranger.sign(claims: claims()) }
        #expect(await store.allRecords.count == 1)
    }

    @Test("a verified token is remembered by its exact bytes until its exp; altered bytes are checked afresh and refused")
    func verifiedTokenCache() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let issuedAt = Int64(clock.now().timeIntervalSince1970)
        let claims = claims().merging(["iat": .int(issuedAt), "exp": .int(issuedAt + 600)]) { $1 }
        let token = try await ring.sign(claims: claims)
        #expect(ring.verifiedTokens.count == 0)
        #expect(try await ring.verify(token) == claims)
        #expect(ring.verifiedTokens.count == 1)
        #expect(try await ring.verify(token) == claims)
        #expect(ring.verifiedTokens.count == 1)

        // Held under the SHA-256 of the whole token: any other bytes are checked afresh.
        let parts = token.split(separator: ".").map(String.init)
        let signature = Array(parts[2].utf8)
        let flipped = String(
            decoding: signature.dropLast() + [signature.last == UInt8(ascii: "A") ? UInt8(ascii: "Q") : UInt8(ascii: "A")], as: UTF8.self)
        let otherPayload = TestBase64URL.encode(Array(#"{"sub":"admin","exp":9999999999}"#.utf8))
        for altered in [parts[0] + "." + otherPayload + "." + parts[2], parts[0] + "." + parts[1] + "." + flipped, token + " "] {
            await #expect(throws: AccountError(.invalidIDToken)) { try await ring.verify(altered) }
        }
        #expect(ring.verifiedTokens.count == 1)

        // At its exp the entry leaves and is not stored again (callers refuse the token as expired).
        clock.advance(600)
        #expect(try await ring.verify(token) == claims)
        #expect(ring.verifiedTokens.count == 0)
    }

    @Test("a remembered token stops verifying once its key is no longer published")
    func verifiedTokenCacheAfterKeyRemoval() async throws {
        let ring = makeRing()
        try await ring.ensureCurrentKey()
        let token = try await ring.sign(claims: claims())
        #expect(try await ring.verify(token)["sub"] == .string("user-1"))
        #expect(ring.verifiedTokens.count == 1)
        try await ring.rotateNow(retiredLifetime: 60)
        #expect(try await ring.verify(token)["sub"] == .string("user-1"))
        clock.advance(61)
        await #expect(throws: AccountError(.invalidIDToken)) { try await ring.verify(token) }
    }

    @Test("the verified-token cache holds at most its capacity, and nothing at capacity 0")
    func verifiedTokenCacheCapacity() async throws {
        let ring = makeRing(verifiedTokenCapacity: 8)
        try await ring.ensureCurrentKey()
        let off = makeRing(verifiedTokenCapacity: 0)
        try await off.ensureCurrentKey()
        var tokens: [String] = []
        for index in 0..<20 { tokens.append(try await ring.sign(claims: claims(subject: "user-\(index)"))) }
        for (index, token) in tokens.enumerated() {
            #expect(try await ring.verify(token)["sub"] == .string("user-\(index)"))
            #expect(ring.verifiedTokens.count <= 8)
            #expect(try await off.verify(token)["sub"] == .string("user-\(index)"))
        }
        // Full, it drops an eighth (here 1) to make room: it stays at its capacity.
        #expect(ring.verifiedTokens.count == 8)
        #expect(off.verifiedTokens.count == 0)

        // When full, expired tokens are the first to go: all 8 expire, the next one finds room.
        let soon = makeRing(verifiedTokenCapacity: 8)
        try await soon.ensureCurrentKey()
        let issuedAt = Int64(clock.now().timeIntervalSince1970)
        for index in 0..<8 {
            let shortLived = claims(subject: "short-\(index)").merging(["iat": .int(issuedAt), "exp": .int(issuedAt + 10)]) { $1 }
            _ = try await soon.verify(try await soon.sign(claims: shortLived))
        }
        #expect(soon.verifiedTokens.count == 8)
        clock.advance(10)
        _ = try await soon.verify(try await soon.sign(claims: claims(subject: "later")))
        #expect(soon.verifiedTokens.count == 1)
    }
}

/// The claims JWTKit checks in the interoperability test.
private struct IDTokenPayload: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
