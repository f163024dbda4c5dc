/// Dotted paths into JSON objects, as Google's update masks name members (`signIn.phoneNumber`).
extension JSONValue {
    /// The dotted paths of every leaf of `object` (non-empty objects recurse), as the Admin SDKs
    /// build masks.
    package static func leafPaths(of object: [String: JSONValue], prefix: String = "") -> [String] {
        object.keys.sorted().flatMap { key -> [String] in
            if case .object(let child) = object[key]!, !child.isEmpty { return leafPaths(of: child, prefix: prefix + key + ".") }
            return [prefix + key]
        }
    }

    /// The value at `path` (nil when a member on the way is absent, not an object, or null).
    package func value(at path: String) -> JSONValue? {
        var current = self
        for part in path.split(separator: ".") {
            guard case .object(let object) = current, let next = object[String(part)] else { return nil }
            current = next
        }
        return current == .null ? nil : current
    }

    /// This object with `path` set to `value`, or removed when `value` is nil; objects on the way
    /// are created. False when the path runs into a scalar or a list (such a path is ignored).
    package mutating func set(_ path: String, to value: JSONValue?) -> Bool {
        let parts = path.split(separator: ".").map(String.init)
        guard !parts.isEmpty else { return false }
        return Self.set(&self, parts[...], value)
    }

    private static func set(_ node: inout JSONValue, _ parts: ArraySlice<String>, _ value: JSONValue?) -> Bool {
        guard case .object(var object) = node else { return false }
        let key = parts.first!
        if parts.count == 1 {
            object[key] = value
        } else {
            var child = object[key] ?? .object([:])
            if case .null = child { child = .object([:]) }
            guard set(&child, parts.dropFirst(), value) else { return false }
            if case .object(let members) = child, members.isEmpty { object[key] = nil } else { object[key] = child }
        }
        node = .object(object)
        return true
    }
}
