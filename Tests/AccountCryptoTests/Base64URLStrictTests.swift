import AccountTesting
import Testing

@testable import AccountCrypto

@Suite("canonical base64url in JWTs")
struct Base64URLStrictTests {
    /// The reference: Foundation's decoder, then a canonical re-encoding (no padding, no stray bits).
    static func reference(_ text: String) -> [UInt8]? {
        let urlAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard text.allSatisfy(urlAlphabet.contains), let bytes = TestBase64URL.decode(text) else { return nil }
        return TestBase64URL.encode(bytes) == text ? bytes : nil
    }

    @Test("decodes what it encodes, and refuses padding, other alphabets and stray bits like the reference")
    func matchesReference() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URLStrict.encode(bytes)
            #expect(encoded == TestBase64URL.encode(bytes))
            #expect(Base64URLStrict.decode(encoded) == bytes)
            let framed = Array(("." + encoded + ".").utf8)
            #expect(Base64URLStrict.decode(utf8: framed[1..<(framed.count - 1)]) == bytes, "a slice, as a JWT's parts are")
        }
        let inputs = TestBase64URL.inputs(
            edges: ["", "A", "AA", "AB", "AAA", "AAB", "AAAA", "AA==", "-_8", "-_9", "+/8", "AA A", "é", "AAAAA", "a.b"],
            alphabet: "AZaz09-_+/= é", count: 3000, maxLength: 10)
        for text in inputs {
            #expect(Base64URLStrict.decode(text) == Self.reference(text), "\(text.debugDescription)")
        }
    }
}
