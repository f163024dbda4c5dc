/// A request path resolved to what it names (identity-toolkit.md §1.1): a fixed route, an Identity Toolkit
/// RPC in bare, host-prefixed or project-scoped spelling, the token route, or nothing.
package enum APIPath: Equatable, Sendable {
    /// A fixed route such as `/healthz` or a key route, host prefix removed.
    case fixed(String)
    /// `/v1/accounts:NAME` (project `nil`) or `/v1/projects/{p}/accounts:NAME`; `NAME` is the RPC
    /// (`signUp`); admin create (`/v1/projects/{p}/accounts`) is `signUp` on a project path;
    /// `/v1/projects/{p}:createSessionCookie` is `createSessionCookie`.
    case rpc(name: String, project: String?)
    /// `/v1/token`.
    case token
    /// `/v1/projects/{p}/tenants/...`.
    case tenant
    /// Nothing here.
    case unknown

    private static let hostPrefixes: [[UInt8]] = [
        "/identitytoolkit.googleapis.com/", "/securetoken.googleapis.com/", "/www.googleapis.com/",
    ].map { Array($0.utf8) }

    /// Resolves a path (without its query). It works on the path's UTF-8 bytes: Character-wise
    /// `hasPrefix`/`split` cost more than the rest of a verifyIdToken call under profiling.
    package init(_ rawPath: String) {
        var path = Array(rawPath.utf8)[...]
        for prefix in Self.hostPrefixes where path.starts(with: prefix) {
            path = path.dropFirst(prefix.count - 1)
            break
        }
        if path.count > 1, path.last == UInt8(ascii: "/") { path = path.dropLast() }
        if path.elementsEqual("/v1/token".utf8) {
            self = .token
            return
        }
        if let name = Self.dropPrefix("/v1/accounts:", path) {
            self = Self.validName(name) ? .rpc(name: Self.string(name), project: nil) : .unknown
            return
        }
        if let rest = Self.dropPrefix("/v1/projects/", path) {
            if let colon = rest.firstIndex(of: UInt8(ascii: ":")), !rest[..<colon].contains(UInt8(ascii: "/")) {
                let project = rest[..<colon]
                let name = rest[(colon + 1)...]
                self =
                    name.elementsEqual("createSessionCookie".utf8) && !project.isEmpty
                    ? .rpc(name: "createSessionCookie", project: Self.string(project)) : .unknown
                return
            }
            let parts = rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard parts.count >= 2, !parts[0].isEmpty else {
                self = .unknown
                return
            }
            let project = Self.string(parts[0])
            if parts[1].elementsEqual("tenants".utf8) {
                self = .tenant
                return
            }
            guard parts.count == 2 else {
                self = .unknown
                return
            }
            if parts[1].elementsEqual("accounts".utf8) {
                self = .rpc(name: "signUp", project: project)
            } else if let name = Self.dropPrefix("accounts:", parts[1]), Self.validName(name) {
                self = .rpc(name: Self.string(name), project: project)
            } else {
                self = .unknown
            }
            return
        }
        self = .fixed(Self.string(path))
    }

    private static func dropPrefix(_ prefix: StaticString, _ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return bytes.starts(with: prefix) ? bytes.dropFirst(prefix.count) : nil
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// RPC names are ASCII letters and digits.
    private static func validName(_ name: ArraySlice<UInt8>) -> Bool {
        !name.isEmpty
            && name.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                    || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
            }
    }
}
