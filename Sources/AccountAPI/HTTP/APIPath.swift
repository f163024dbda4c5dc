/// A request path resolved to what it names (identity-toolkit.md §1.1): a fixed route, an Identity Toolkit
/// RPC in bare, host-prefixed or project-scoped spelling, the token route, or nothing.
package enum APIPath: Equatable, Sendable {
    /// A fixed route such as `/healthz` or a key route, host prefix removed.
    case fixed(String)
    /// `/v1/accounts:NAME` (project `nil`) or `/v1/projects/{p}/accounts:NAME`; `NAME` is the RPC
    /// (`signUp`); admin create (`/v1/projects/{p}/accounts`) is `signUp` on a project path;
    /// `/v1/projects/{p}:createSessionCookie` is `createSessionCookie`. Routes outside `accounts:`
    /// are named by their path, which no `accounts:` name can spell (it has a `/`):
    /// `v1/projects`, `v2/passwordPolicy`, `v2/accounts/mfaSignIn:start`, `v2/config` (on
    /// `/v2/projects/{p}/config`, project-scoped). The legacy v3 names resolve to their v1 targets
    /// (federation-and-limits.md §D.7). Collections of resources (`/v1/projects/{p}/customTokenSigners`,
    /// `…/customTokenSigners/{id}`) are one name whose handler reads the method and the `resource` id.
    case rpc(name: String, project: String?, resource: String? = nil)
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
        if let rest = Self.dropPrefix("/v2/", path) {
            self = Self.v2(rest)
            return
        }
        if let name = Self.dropPrefix("/identitytoolkit/v3/relyingparty/", path) {
            // publicKeys is a key route of its own (identity-toolkit.md §4.19).
            self = Self.legacy[Self.string(name)].map { .rpc(name: $0, project: nil) } ?? .fixed(Self.string(path))
            return
        }
        for name in Self.v1Configuration where path.elementsEqual(("/" + name).utf8) {
            self = .rpc(name: name, project: nil)
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
            if parts[1].elementsEqual("customTokenSigners".utf8), parts.count <= 3 {
                let resource = parts.count == 3 ? Self.string(parts[2]) : nil
                self = resource?.isEmpty == true ? .unknown : .rpc(name: "v1/customTokenSigners", project: project, resource: resource)
                return
            }
            guard parts.count == 2 else {
                self = .unknown
                return
            }
            if parts[1].elementsEqual("accounts".utf8) {
                self = .rpc(name: "signUp", project: project)
            } else if parts[1].elementsEqual("idpConfigs:testCredential".utf8) {
                self = .rpc(name: "v1/idpConfigs:testCredential", project: project)
            } else if let name = Self.dropPrefix("accounts:", parts[1]), Self.validName(name) {
                self = .rpc(name: Self.string(name), project: project)
            } else {
                self = .unknown
            }
            return
        }
        self = .fixed(Self.string(path))
    }

    /// The client-configuration GET routes of v1 (federation-and-limits.md §D.3–D.5).
    private static let v1Configuration = ["v1/projects", "v1/recaptchaParams", "v1/sessionCookiePublicKeys"]

    /// Legacy v3 names and the route each is (federation-and-limits.md §D.7).
    private static let legacy: [String: String] = [
        "createAuthUri": "createAuthUri", "deleteAccount": "delete", "emailLinkSignin": "signInWithEmailLink",
        "getAccountInfo": "lookup", "getOobConfirmationCode": "sendOobCode", "getProjectConfig": "v1/projects",
        "getRecaptchaParam": "v1/recaptchaParams", "resetPassword": "resetPassword",
        "sendVerificationCode": "sendVerificationCode", "setAccountInfo": "update", "signupNewUser": "signUp",
        "verifyAssertion": "signInWithIdp", "verifyCustomToken": "signInWithCustomToken",
        "verifyPassword": "signInWithPassword", "verifyPhoneNumber": "signInWithPhoneNumber",
        "downloadAccount": "v3/downloadAccount", "uploadAccount": "v3/uploadAccount",
        "signOutUser": "v3/signOutUser", "setProjectConfig": "v3/setProjectConfig",
    ]

    /// `/v2/…`: the client configuration routes, `accounts…` methods, and project-scoped resources
    /// (`/v2/projects/{p}/config`, `…/inboundSamlConfigs/{id}` → `v2/config`, `v2/inboundSamlConfigs`).
    private static func v2(_ rest: ArraySlice<UInt8>) -> APIPath {
        if let resource = dropPrefix("projects/", rest) {
            let parts = resource.split(separator: UInt8(ascii: "/"), maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else { return .unknown }
            if parts[1].elementsEqual("tenants".utf8) { return .tenant }
            if parts.count == 3 {
                guard !parts[2].isEmpty, !parts[2].contains(UInt8(ascii: "/")) else { return .unknown }
                return .rpc(name: "v2/" + string(parts[1]), project: string(parts[0]), resource: string(parts[2]))
            }
            return .rpc(name: "v2/" + string(parts[1]), project: string(parts[0]))
        }
        return rest.isEmpty ? .unknown : .rpc(name: "v2/" + string(rest), project: nil)
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
