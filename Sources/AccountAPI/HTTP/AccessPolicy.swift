package import AccountCore
import Foundation

/// Who may call, per identity-toolkit.md §1.3: the API keys that make a client caller and the admin bearer
/// tokens (with the names the audit trail records) that make an admin caller.
package struct AccessPolicy: Sendable {
    /// The one project this server serves.
    package var projectID: String
    /// Accepted API keys; `nil` accepts any key (only `demo-` projects run that way).
    package var apiKeys: Set<String>?
    /// Admin bearer tokens: token → name.
    package var adminTokens: [String: String]
    /// Proxies whose `X-Forwarded-For` is believed (federation-and-limits.md §E.2).
    package var trustedProxies: [IPNetwork]

    /// Creates a policy.
    package init(projectID: String, apiKeys: Set<String>?, adminTokens: [String: String], trustedProxies: [IPNetwork] = []) {
        self.projectID = projectID
        self.apiKeys = apiKeys
        self.adminTokens = adminTokens
        self.trustedProxies = trustedProxies
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the right-most
    /// `X-Forwarded-For` entry that is not a trusted proxy (§E.2). A forged header from an
    /// untrusted peer changes nothing. Canonical (decision 13): an IPv4-mapped or NAT64 address is
    /// its IPv4 address, so a dual-stack listener keys, matches and stores IPv4 clients as IPv4.
    package func clientAddress(peer: String?, forwardedFor: [String]) -> String? {
        guard let raw = peer else { return nil }
        let peer = IPAddress.canonical(raw) ?? raw
        guard !trustedProxies.isEmpty, trustedProxies.contains(where: { $0.contains(peer) }) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            // Not an address: stop believing the header.
            guard let address = IPAddress.canonical(Self.withoutPort(hop)) else { break }
            client = address
            if !trustedProxies.contains(where: { $0.contains(address) }) { break }
        }
        return client
    }

    /// An `X-Forwarded-For` entry without the port some proxies append (`1.2.3.4:5678`,
    /// `[2001:db8::1]:443`); anything else as it is.
    static func withoutPort(_ hop: String) -> String {
        if hop.hasPrefix("["), let close = hop.firstIndex(of: "]") { return String(hop[hop.index(after: hop.startIndex)..<close]) }
        let colons = hop.filter { $0 == ":" }.count
        if colons == 1, hop.contains("."), let colon = hop.firstIndex(of: ":") { return String(hop[..<colon]) }
        return hop
    }

    /// The admin name for a bearer token, compared in constant time against every configured one.
    package func adminName(forBearer token: String) -> String? {
        var match: String?
        for (candidate, name) in adminTokens where ConstantTime.equal(candidate, token) {
            match = name
        }
        return match
    }

    /// Whether the key is accepted for this project.
    package func accepts(apiKey: String) -> Bool {
        guard let apiKeys else { return !apiKey.isEmpty }
        var found = false
        for candidate in apiKeys where ConstantTime.equal(candidate, apiKey) { found = true }
        return found
    }

    /// The key put into links made for admin callers (identity-toolkit.md §4.3: the project's first key).
    package var linkAPIKey: String {
        apiKeys?.sorted().first ?? "demo-api-key"
    }
}

/// Who is calling, after §1.3's checks.
package enum Caller: Sendable, Equatable {
    /// An app with an API key.
    case client(apiKey: String)
    /// An operator or backend with an admin bearer token; the token's configured name.
    case admin(name: String)

    /// Whether the caller is an admin.
    package var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }
}
