import Foundation
import NIOSSL
package import PostgresNIO

/// A parsed `postgres://user:password@host:port/database?sslmode=…` URL, the one form every
/// deployment (compose, the local cluster, tests) hands accountd. As with libpq, a `host` query
/// parameter that is a directory (`postgres://postgres@/accountd?host=/path/pgdata&port=54329`)
/// connects through the Unix socket `<directory>/.s.PGSQL.<port>` instead of TCP. Several hosts
/// may be named, as libpq takes them (`postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write`,
/// or `?host=h1,h2&port=5432,5433`): the pool tries them in order (``endpoints``), and with
/// `read-write` (the default when there are several) keeps only a server that accepts writes.
package struct DatabaseURL: Sendable, Equatable {
    /// Host name or IP of the (first) server.
    package var host: String
    /// TCP port of the (first) server.
    package var port: Int
    /// The servers after the first, in the order they are tried.
    package var otherHosts: [Endpoint] = []
    /// Which server a connection may be made to (libpq's `target_session_attrs`).
    package var targetSessionAttrs: TargetSessionAttrs = .any

    /// One server of a multi-host URL.
    package struct Endpoint: Sendable, Equatable {
        /// Host name or IP.
        package var host: String
        /// TCP port.
        package var port: Int

        /// A server at `host:port`.
        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// libpq's `target_session_attrs`, the values accountd serves.
    package enum TargetSessionAttrs: String, Sendable {
        /// Any server that answers.
        case any
        /// Only a server whose sessions may write (`SHOW transaction_read_only` is `off`).
        case readWrite = "read-write"
    }

    /// Every server, in the order they are tried.
    package var endpoints: [Endpoint] { [Endpoint(host: host, port: port)] + otherHosts }
    /// Role to connect as.
    package var username: String
    /// Password, if any.
    package var password: String?
    /// Database name.
    package var database: String
    /// Whether TLS is required (`sslmode=require|verify-*`).
    package var requireTLS: Bool
    /// The directory of the server's Unix socket, when it is reached through one (`host` is then
    /// empty).
    package var socketDirectory: String?

    /// Why a URL was refused; the message is safe to print (it never echoes the password).
    package struct ParseError: Error, CustomStringConvertible {
        /// What is wrong with the URL.
        package var description: String
    }

    /// Parses a URL, refusing anything that is not a PostgreSQL URL with a host.
    package init(_ string: String) throws {
        // URLComponents takes one host: the others are read here and the first left in place.
        var string = string
        var listed: [(host: String, port: Int?)] = []
        if let schemeEnd = string.range(of: "://") {
            let rest = string[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            let hostsStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
            let hostList = authority[hostsStart...]
            if hostList.contains(",") {
                for part in hostList.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let endpoint = Self.endpoint(part) else {
                        throw ParseError(description: "DATABASE_URL has a malformed host in its list: \(part.prefix(80))")
                    }
                    listed.append(endpoint)
                }
                let first = hostList.split(separator: ",", omittingEmptySubsequences: false)[0]
                string.replaceSubrange(hostList.startIndex..<hostList.endIndex, with: first)
            }
        }
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw ParseError(description: "DATABASE_URL must look like postgres://user:password@host:5432/database")
        }
        let query = components.queryItems ?? []
        let socket = query.first { $0.name == "host" }?.value.flatMap { $0.hasPrefix("/") ? $0 : nil }
        let keywordHosts = query.first { $0.name == "host" }?.value.flatMap { $0.hasPrefix("/") || $0.isEmpty ? nil : $0 }
        guard let host = components.host ?? keywordHosts.map({ _ in "" }), !host.isEmpty || socket != nil || keywordHosts != nil else {
            throw ParseError(description: "DATABASE_URL has no host")
        }
        self.host = host
        self.socketDirectory = socket
        self.port = components.port ?? query.first { $0.name == "port" }?.value.flatMap(Int.init) ?? 5432
        self.username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        self.password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? self.username : (path.removingPercentEncoding ?? path)
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        self.requireTLS = ["require", "verify-ca", "verify-full"].contains(sslmode)
        // The keyword form of a list: `host=h1,h2&port=p1,p2` (one port for all, or one each).
        if listed.isEmpty, socket == nil, let hosts = keywordHosts, hosts.contains(",") || self.host.isEmpty {
            let ports = (query.first { $0.name == "port" }?.value ?? "").split(separator: ",").map { Int($0) }
            for (index, name) in hosts.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                guard !name.isEmpty else { throw ParseError(description: "DATABASE_URL has an empty host in its list") }
                let port = ports.count > 1 ? (index < ports.count ? ports[index] : nil) : ports.first ?? nil
                listed.append((String(name), port))
            }
        }
        if !listed.isEmpty {
            let defaultPort = query.first { $0.name == "port" }?.value.flatMap(Int.init) ?? 5432
            let endpoints = listed.map { Endpoint(host: $0.host, port: $0.port ?? defaultPort) }
            self.host = endpoints[0].host
            self.port = endpoints[0].port
            self.otherHosts = Array(endpoints.dropFirst())
        }
        switch query.first(where: { $0.name == "target_session_attrs" })?.value {
        case nil: targetSessionAttrs = otherHosts.isEmpty ? .any : .readWrite
        case "any": targetSessionAttrs = .any
        case "read-write", "primary": targetSessionAttrs = .readWrite
        case let other?:
            throw ParseError(description: "target_session_attrs \(other.prefix(40)) is not served: use read-write or any")
        }
    }

    /// `host`, `host:port` or `[v6]:port` of a host list.
    private static func endpoint(_ text: Substring) -> (host: String, port: Int?)? {
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (String(parts[0]), nil)
        case 2:
            guard !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            return (String(parts[0]), port)
        default: return nil
        }
    }

    /// The same server with another database (tests make one database per suite).
    package func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// A server reached through its Unix socket in `directory` (the local cluster).
    package init(socketDirectory directory: String, port: Int, username: String, database: String) {
        self.host = ""
        self.socketDirectory = directory
        self.port = port
        self.username = username
        self.password = nil
        self.database = database
        self.requireTLS = false
    }

    /// The URL without its password, for logs.
    package var redacted: String {
        if let socketDirectory { return "postgres://\(username)@/\(database)?host=\(socketDirectory)&port=\(port)" }
        return "postgres://\(username)@\(hostList)/\(database)"
            + (otherHosts.isEmpty ? "" : "?target_session_attrs=\(targetSessionAttrs.rawValue)")
    }

    /// `h1:p1,h2:p2` (IPv6 hosts in brackets).
    private var hostList: String {
        endpoints.map { ($0.host.contains(":") ? "[\($0.host)]" : $0.host) + ":\($0.port)" }.joined(separator: ",")
    }

    /// The URL as a string, password included.
    package var string: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.path = "/" + database
        var query: [URLQueryItem] = []
        if let socketDirectory {
            query = [URLQueryItem(name: "host", value: socketDirectory), URLQueryItem(name: "port", value: String(port))]
        } else {
            components.port = port
        }
        if requireTLS { query.append(URLQueryItem(name: "sslmode", value: "require")) }
        if !otherHosts.isEmpty { query.append(URLQueryItem(name: "target_session_attrs", value: targetSessionAttrs.rawValue)) }
        if !query.isEmpty { components.queryItems = query }
        guard var text = components.string else { return redacted }
        if !otherHosts.isEmpty, let first = text.range(of: "@\(components.percentEncodedHost ?? host):\(port)/") {
            text.replaceSubrange(first, with: "@\(hostList)/")
        }
        return text
    }

    /// The configuration of a connection to each server, in order (``endpoints``).
    package func connectionConfigurations(pool: PoolSettings = PoolSettings()) throws -> [PostgresConnection.Configuration] {
        try endpoints.map { endpoint in
            var single = self
            single.host = endpoint.host
            single.port = endpoint.port
            single.otherHosts = []
            return try single.connectionConfiguration(pool: pool)
        }
    }

    /// The configuration of one connection to this URL: TLS as the URL asks, the pool's time
    /// limits set for the whole session.
    package func connectionConfiguration(pool: PoolSettings = PoolSettings()) throws -> PostgresConnection.Configuration {
        var configuration =
            if let socketDirectory {
                PostgresConnection.Configuration(
                    unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
            } else {
                PostgresConnection.Configuration(
                    host: host,
                    port: port,
                    username: username,
                    password: password,
                    database: database,
                    tls: requireTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
                )
            }
        configuration.options.connectTimeout = .seconds(pool.connectTimeoutSeconds)
        if let lockTimeout = pool.lockTimeoutSeconds {
            configuration.options.additionalStartupParameters.append(("lock_timeout", "\(lockTimeout)s"))
        }
        if let statementTimeout = pool.statementTimeoutSeconds {
            configuration.options.additionalStartupParameters.append(("statement_timeout", "\(statementTimeout)s"))
        }
        return configuration
    }
}
