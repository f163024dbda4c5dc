import AccountCrypto
import Testing

@Suite("sealing signing keys under the key-encryption key")
struct KeySealerTests {
    let sealer = KeySealer(keyEncryptionKey: Array(0..<32))

    @Test("seal then open gives the plaintext back; two seals differ (fresh nonce)")
    func roundTrip() throws {
        let plaintext: [UInt8] = Array("a private key".utf8)
        let sealed = try sealer.seal(plaintext)
        #expect(sealed.count == 12 + plaintext.count + 16)
        #expect(try sealer.open(sealed) == plaintext)
        #expect(try sealer.seal(plaintext) != sealed)
    }

    @Test("a flipped bit anywhere fails to open")
    func tampered() throws {
        let sealed = try sealer.seal(Array("a private key".utf8))
        for index in [0, 12, sealed.count - 1] {
            var altered = sealed
            altered[index] ^= 0x01
            #expect(throws: KeySealer.OpenFailed.self) { try sealer.open(altered) }
        }
        #expect(throws: KeySealer.OpenFailed.self) { try sealer.open([1, 2, 3]) }
    }

    @Test("another KEK cannot open, and has another id")
    func otherKEK() throws {
        let other = KeySealer(keyEncryptionKey: Array(repeating: 7, count: 32))
        let sealed = try sealer.seal([1, 2, 3])
        #expect(throws: KeySealer.OpenFailed.self) { try other.open(sealed) }
        #expect(other.kekID != sealer.kekID)
        #expect(sealer.kekID.count == 16 && sealer.kekID.allSatisfy(\.isHexDigit))
        #expect(KeySealer(keyEncryptionKey: Array(0..<32)).kekID == sealer.kekID)
    }

    @Test("derived subkeys depend on info and length")
    func derive() {
        #expect(sealer.derive(info: "a", count: 32).count == 32)
        #expect(sealer.derive(info: "a", count: 32) == sealer.derive(info: "a", count: 32))
        #expect(sealer.derive(info: "a", count: 32) != sealer.derive(info: "b", count: 32))
        #expect(sealer.derive(info: "a", count: 16).count == 16)
    }
}
