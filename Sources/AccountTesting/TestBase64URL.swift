import Foundation

/// base64url without padding, through Foundation's coder and string replacements: the reference
/// the service's own coders are held to, independent of them, and the way tests craft tokens.
package enum TestBase64URL {
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The UTF-8 of `text`, encoded.
    package static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// Decodes base64url or standard base64, padded or not (what Foundation accepts).
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map(Array.init)
    }

    /// `edges` and then `count` random strings of up to `maxLength` characters drawn from
    /// `alphabet`: input for holding a coder to this reference.
    package static func inputs(edges: [String], alphabet: String, count: Int, maxLength: Int) -> [String] {
        let characters = Array(alphabet)
        var generator = SystemRandomNumberGenerator()
        return edges
            + (0..<count).map { _ in
                String((0..<Int.random(in: 0...maxLength, using: &generator)).map { _ in characters.randomElement(using: &generator)! })
            }
    }
}
