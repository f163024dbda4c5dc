import Foundation
import NIOSSL
package import PostgresNIO

/// A parsed `postgres://user:password@host:port/database?sslmode=…` URL, the one form every
/// deployment (compose, the local cluster, tests) hands accountd. As with libpq, a `host` query
/// parameter that is a directory (`postgres://postgres@/accountd?host=/path/pgdata&port=54329`)
/// connects through the Unix socket `<directory>/.s.PGSQL.<port>` instead of TCP.
package struct DatabaseURL: Sendable, Equatable {
    /// Host name or IP of the server.
    package var host: String
    /// TCP port.
    package var port: Int
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
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw ParseError(description: "DATABASE_URL must look like postgres://user:password@host:5432/database")
        }
        let query = components.queryItems ?? []
        let socket = query.first { $0.name == "host" }?.value.flatMap { $0.hasPrefix("/") ? $0 : nil }
        guard let host = components.host, !host.isEmpty || socket != nil else {
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
        return "postgres://\(username)@\(host):\(port)/\(database)"
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
        if !query.isEmpty { components.queryItems = query }
        return components.string ?? redacted
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
