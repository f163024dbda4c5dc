import AccountCore
import Foundation
import Testing

@Suite("JSON parser and writer (pure)")
struct JSONValueParsingTests {
    @Test("Parses every JSON type with the meaning JSONDecoder gave it")
    func types() throws {
        let value = try JSONValue.parse(
            #" { "a": [1, -2, 3.5, 1e3, 0, -0.25, 9223372036854775807, 9223372036854775808], "b": true, "c": false, "d": null, "e": "x" } "#
        )
        #expect(
            value
                == .object([
                    "a": .array([
                        .int(1), .int(-2), .double(3.5), .double(1000), .int(0), .double(-0.25), .int(.max),
                        .double(9.223372036854775808e18),
                    ]),
                    "b": .bool(true), "c": .bool(false), "d": .null, "e": .string("x"),
                ])
        )
        #expect(try JSONValue.parse("42") == .int(42))
        #expect(try JSONValue.parse(#""top""#) == .string("top"))
        #expect(try JSONValue.parse("[]") == .array([]))
        #expect(try JSONValue.parse("{}") == .object([:]))
        #expect(try JSONValue.parse(#"{"k":1,"k":2}"#) == .object(["k": .int(2)]))
    }

    @Test("Decodes escapes, surrogate pairs and raw UTF-8")
    func strings() throws {
        #expect(try JSONValue.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        #expect(try JSONValue.parse(#""\u00e9\u4e2d\ud83d\ude00""#) == .string("é中😀"))
        #expect(try JSONValue.parse("\"é中😀\"") == .string("é中😀"))
        #expect(try JSONValue.parse(#""plain then \u0041""#) == .string("plain then A"))
    }

    @Test(
        "Refuses what RFC 8259 refuses",
        arguments: [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "{'a':1}", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity",
            "tru", "nul", "[1 2]", "{\"a\" 1}", "\"unterminated", "\"\\x\"", "\"\\u12\"", "\"\\ud83d\"", "\"\\ude00\"",
            "\"a\u{1}b\"", "1 2", "{} x", "1e999",
        ]
    )
    func refuses(_ text: String) {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(text) }
    }

    @Test("Refuses invalid UTF-8 and nesting deeper than the limit")
    func limits() throws {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }
        let limit = JSONValue.maximumDepth
        _ = try JSONValue.parse(String(repeating: "[", count: limit) + String(repeating: "]", count: limit))
        #expect(throws: JSONValue.SyntaxError.self) {
            try JSONValue.parse(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
        // A hostile depth fails cleanly instead of exhausting the stack.
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(String(repeating: "[", count: 1_000_000)) }
    }

    @Test("Writes sorted, compact JSON that Foundation reads back to the same value")
    func writer() throws {
        let value = JSONValue.object([
            "z": .int(-5), "a": .string("q\"uo/te\\ é\n\u{1}"), "m": .array([.bool(true), .null, .double(1.5), .double(2)]),
            "nested": .object(["b": .int(1), "a": .int(2)]),
        ])
        let text = value.serialized()
        #expect(text == #"{"a":"q\"uo/te\\ é\n\u0001","m":[true,null,1.5,2],"nested":{"a":2,"b":1},"z":-5}"#)
        var roundTripped = value
        if case .object(var fields) = roundTripped {
            fields["m"] = .array([.bool(true), .null, .double(1.5), .int(2)])  // a whole double is written as an integer
            roundTripped = .object(fields)
        }
        #expect(try JSONValue.parse(text) == roundTripped)
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(foundation["a"] as? String == "q\"uo/te\\ é\n\u{1}")
        #expect((foundation["nested"] as? [String: Any])?["a"] as? Int == 2)
        // Integers are written digit by digit: the edges and a spread of magnitudes against String(_:).
        var generator = SystemRandomNumberGenerator()
        var integers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, .max, .min, .max - 1, .min + 1]
        for _ in 0..<500 {
            integers.append(Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...63, using: &generator))
        }
        for number in integers {
            #expect(JSONValue.int(number).serialized() == String(number))
            #expect(JSONValue.array([.int(number), .int(-7)]).serialized() == "[\(number),-7]")
        }
        #expect(JSONValue.double(-4096).serialized() == "-4096")
    }

    @Test("Agrees with JSONSerialization on generated documents")
    func agreesWithFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let data = try JSONSerialization.data(withJSONObject: ["v": value], options: [.fragmentsAllowed])
            let parsed = try JSONValue.parse(data)
            let reparsed = try #require(try JSONSerialization.jsonObject(with: Data(parsed.serialized().utf8)) as? NSDictionary)
            let original = try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
            #expect(reparsed == original)
        }
    }

    private static func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> Any {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
        case 0: return Int.random(in: -1_000_000...1_000_000, using: &generator)
        case 1: return Double.random(in: -1000...1000, using: &generator)
        case 2: return Bool.random(using: &generator)
        case 3:
            let scalars = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                Character(Unicode.Scalar([0x22, 0x5C, 0x2F, 0x0A, 0x01, 0x41, 0xE9, 0x4E2D, 0x1F600].randomElement(using: &generator)!)!)
            }
            return String(scalars)
        case 4: return (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) }
        default:
            var object: [String: Any] = [:]
            for index in 0..<Int.random(in: 0...4, using: &generator) {
                object["k\(index)"] = randomValue(depth: depth + 1, using: &generator)
            }
            return object
        }
    }
}
