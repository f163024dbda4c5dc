package import AccountCore
package import Foundation

/// A request body with the leniency of Google's JSON parser (identity-toolkit.md §1.2): camelCase or
/// snake_case names, int64 as number or decimal string, booleans also as `"true"`/`"false"`,
/// unknown fields ignored. A wrong type is an `INVALID_ARGUMENT` error naming the field.
package struct RPCBody: Sendable {
    /// The top-level object's fields.
    package let fields: [String: JSONValue]

    /// An empty body.
    package init(fields: [String: JSONValue] = [:]) {
        self.fields = fields
    }

    /// Parses a JSON object; an empty body is an empty object.
    package init(json data: Data) throws(APIError) {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            self.init()
            return
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw .invalidJSON("Syntax error: the body is not valid JSON.")
        }
        guard case .object(let fields) = value else {
            throw .invalidJSON("Root element must be a message.")
        }
        self.init(fields: fields)
    }

    /// Parses `application/x-www-form-urlencoded` (the JS SDK's token form); every value a string.
    package init(form data: Data) {
        var fields: [String: JSONValue] = [:]
        let text = String(decoding: data, as: UTF8.self)
        for (name, value) in FormEncoding.pairs(text[...].utf8) { fields[name] = .string(value) }
        self.init(fields: fields)
    }

    /// The value under `name` or its snake_case spelling; JSON `null` counts as absent.
    package func value(_ name: String) -> JSONValue? {
        var found = fields[name]
        if found == nil {
            let snake = Self.snakeCase(name)
            if snake != name { found = fields[snake] }
        }
        if case .null = found { return nil }
        return found
    }

    /// Whether the field is present at all (even as `""`).
    package func has(_ name: String) -> Bool { value(name) != nil }

    /// A string field; numbers and booleans are refused as Google does for string fields.
    package func string(_ name: String) throws(APIError) -> String? {
        switch value(name) {
        case nil: return nil
        case .string(let text): return text
        case let other?: throw .invalidJSON("Invalid value at '\(name)' (TYPE_STRING), \(other.typeName)")
        }
    }

    /// A string field where `""` counts as absent (ActionCodeSettings, identity-toolkit.md §4.3).
    package func nonEmptyString(_ name: String) throws(APIError) -> String? {
        guard let text = try string(name), !text.isEmpty else { return nil }
        return text
    }

    /// A boolean field: JSON bool or `"true"`/`"false"`.
    package func bool(_ name: String) throws(APIError) -> Bool? {
        switch value(name) {
        case nil: return nil
        case .bool(let flag): return flag
        case .string("true"): return true
        case .string("false"): return false
        case let other?: throw .invalidJSON("Invalid value at '\(name)' (TYPE_BOOL), \(other.typeName)")
        }
    }

    /// An int64 field: JSON integer or decimal string.
    package func int64(_ name: String) throws(APIError) -> Int64? {
        switch value(name) {
        case nil: return nil
        case .int(let number): return number
        case .double(let number) where number.rounded() == number && abs(number) < 9.2e18: return Int64(number)
        case .string(let text):
            guard let number = Int64(text) else {
                throw .invalidJSON("Invalid value at '\(name)' (TYPE_INT64), \"\(text.prefix(40))\"")
            }
            return number
        case let other?: throw .invalidJSON("Invalid value at '\(name)' (TYPE_INT64), \(other.typeName)")
        }
    }

    /// A repeated string field; a lone string is accepted as a one-element list.
    package func strings(_ name: String) throws(APIError) -> [String]? {
        switch value(name) {
        case nil: return nil
        case .string(let text): return [text]
        case .array(let items):
            var result: [String] = []
            for item in items {
                guard case .string(let text) = item else {
                    throw .invalidJSON("Invalid value at '\(name)' (TYPE_STRING), \(item.typeName)")
                }
                result.append(text)
            }
            return result
        case let other?: throw .invalidJSON("Invalid value at '\(name)' (TYPE_STRING), \(other.typeName)")
        }
    }

    /// A repeated message field.
    package func objects(_ name: String) throws(APIError) -> [RPCBody]? {
        switch value(name) {
        case nil: return nil
        case .array(let items):
            var result: [RPCBody] = []
            for item in items {
                guard case .object(let fields) = item else {
                    throw .invalidJSON("Invalid value at '\(name)' (message), \(item.typeName)")
                }
                result.append(RPCBody(fields: fields))
            }
            return result
        case let other?: throw .invalidJSON("Invalid value at '\(name)' (message), \(other.typeName)")
        }
    }

    /// `camelCase` → `camel_case`. Field names are the ASCII names of Google's API, so this works
    /// on bytes (it runs for every absent field of every user in a 1,000-user import).
    static func snakeCase(_ name: String) -> String {
        let isUpper = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
        guard name.utf8.contains(where: isUpper) else { return name }
        var snake: [UInt8] = []
        snake.reserveCapacity(name.utf8.count + 4)
        for byte in name.utf8 {
            if isUpper(byte) {
                snake.append(UInt8(ascii: "_"))
                snake.append(byte + 0x20)
            } else {
                snake.append(byte)
            }
        }
        return String(decoding: snake, as: UTF8.self)
    }
}

extension RPCBody {
    /// The longest string a client may send in any field, anywhere in the body (in UTF-8 bytes),
    /// unless ``clientFieldLimits`` names the field: every client string is bounded before a
    /// handler reads it, so a field added later cannot be used to store or echo megabytes.
    /// Fields with a rule of their own (an email, a display name, decision 17's flow fields) are
    /// checked again, tighter, by that rule.
    static let clientStringLimit = 8 << 10

    /// Client fields that legitimately carry more: credentials built from an IdP's ID token (16 KiB
    /// by §A.4, inside a form or a URL), our ID tokens (which carry an IdP's sign-in attributes), a
    /// custom token (8 KiB by §C.3) and a password (4096 UTF-16 units, up to three bytes each): the
    /// limit lets their own checks answer with their own errors.
    static let clientFieldLimits: [String: Int] = {
        let named: [String: Int] = [
            "postBody": 48 << 10, "requestUri": 48 << 10, "idToken": 32 << 10, "pendingIdToken": 32 << 10,
            "token": 16 << 10, "password": 16 << 10, "newPassword": 16 << 10, "oldPassword": 16 << 10,
        ]
        var limits = named
        for (name, limit) in named { limits[snakeCase(name)] = limit }
        return limits
    }()

    /// Refuses a client's body holding a string longer than its field's limit, at any depth
    /// (`INVALID_ARGUMENT : <field> is longer than <n> bytes.`).
    package func checkClientBounds() throws(AccountError) {
        for (name, value) in fields {
            let limit = Self.clientFieldLimits[name] ?? Self.clientStringLimit
            if Self.longestString(in: value) > limit { throw FieldLimits.tooLong(String(name.prefix(64)), limit) }
        }
    }

    /// The longest string (or object key) in `value`, in UTF-8 bytes.
    private static func longestString(in value: JSONValue) -> Int {
        switch value {
        case .string(let text): text.utf8.count
        case .array(let items): items.lazy.map(longestString).max() ?? 0
        case .object(let members): members.lazy.map { max($0.key.utf8.count, longestString(in: $0.value)) }.max() ?? 0
        default: 0
        }
    }
}
