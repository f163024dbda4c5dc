import Foundation
import Testing

@testable import AccountCrypto

@Suite("canonical base64url in JWTs")
struct Base64URLStrictTests {
    /// The reference: Foundation's decoder, then a canonical re-encoding (no padding, no stray bits).
    static func reference(_ text: String) -> [UInt8]? {
        let urlAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard text.allSatisfy(urlAlphabet.contains) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard let bytes = Data(base64Encoded: base64).map(Array.init) else { return nil }
        let canonical = bytes.base64URLReference
        return canonical == text ? bytes : nil
    }

    @Test("decodes what it encodes, and refuses padding, other alphabets and stray bits like the reference")
    func matchesReference() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URLStrict.encode(bytes)
            #expect(encoded == bytes.base64URLReference)
            #expect(Base64URLStrict.decode(encoded) == bytes)
            let framed = Array(("." + encoded + ".").utf8)
            #expect(Base64URLStrict.decode(utf8: framed[1..<(framed.count - 1)]) == bytes, "a slice, as a JWT's parts are")
        }
        let edges = ["", "A", "AA", "AB", "AAA", "AAB", "AAAA", "AA==", "-_8", "-_9", "+/8", "AA A", "é", "AAAAA", "a.b"]
        var inputs = edges
        let alphabet = Array("AZaz09-_+/= é")
        for _ in 0..<3000 {
            inputs.append(String((0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for text in inputs {
            #expect(Base64URLStrict.decode(text) == Self.reference(text), "\(text.debugDescription)")
        }
    }
}

extension [UInt8] {
    fileprivate var base64URLReference: String {
        Data(self).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
