public import Foundation
import NIOSSL
public import PostgresNIO

/// A parsed `postgres://user:password@host:port/database?sslmode=…` URL, the one form every
/// deployment (compose, the local cluster, tests) hands accountd.
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
        guard let host = components.host, !host.isEmpty else {
            throw ParseError(description: "DATABASE_URL has no host")
        }
        self.host = host
        self.port = components.port ?? 5432
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

    /// The URL without its password, for logs.
    package var redacted: String {
        "postgres://\(username)@\(host):\(port)/\(database)"
    }

    /// The URL as a string, password included.
    package var string: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.port = port
        components.path = "/" + database
        if requireTLS { components.queryItems = [URLQueryItem(name: "sslmode", value: "require")] }
        return components.string ?? redacted
    }

    /// A PostgresNIO client configuration for this URL.
    package func clientConfiguration(maximumConnections: Int = 20) throws -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: requireTLS ? .require(.makeClientConfiguration()) : .disable
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        return configuration
    }
}
