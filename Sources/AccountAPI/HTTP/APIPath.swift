/// A request path resolved to what it names (reference §1.1): a fixed route, an Identity Toolkit
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

    private static let hostPrefixes = [
        "/identitytoolkit.googleapis.com", "/securetoken.googleapis.com", "/www.googleapis.com",
    ]

    /// Resolves a path (without its query).
    package init(_ rawPath: String) {
        var path = Substring(rawPath)
        for prefix in Self.hostPrefixes where path.hasPrefix(prefix + "/") {
            path = path.dropFirst(prefix.count)
            break
        }
        if path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        if path == "/v1/token" {
            self = .token
            return
        }
        if path.hasPrefix("/v1/accounts:") {
            let name = path.dropFirst("/v1/accounts:".count)
            self = Self.validName(name) ? .rpc(name: String(name), project: nil) : .unknown
            return
        }
        if path.hasPrefix("/v1/projects/") {
            let rest = path.dropFirst("/v1/projects/".count)
            if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/") {
                let project = rest[..<colon]
                let name = rest[rest.index(after: colon)...]
                self =
                    name == "createSessionCookie" && !project.isEmpty
                    ? .rpc(name: "createSessionCookie", project: String(project)) : .unknown
                return
            }
            let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 2, !parts[0].isEmpty else {
                self = .unknown
                return
            }
            let project = String(parts[0])
            if parts[1] == "tenants" {
                self = .tenant
                return
            }
            guard parts.count == 2 else {
                self = .unknown
                return
            }
            if parts[1] == "accounts" {
                self = .rpc(name: "signUp", project: project)
            } else if parts[1].hasPrefix("accounts:"), Self.validName(parts[1].dropFirst("accounts:".count)) {
                self = .rpc(name: String(parts[1].dropFirst("accounts:".count)), project: project)
            } else {
                self = .unknown
            }
            return
        }
        self = .fixed(String(path))
    }

    private static func validName(_ name: Substring) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber }
    }
}
