import Foundation

/// Where and how ``SMTPTransport`` submits mail. Usually parsed from a URL:
/// `smtp://user:pass@host:587?starttls=required|opportunistic|none&from=no-reply@example.com&verify=false`
/// (`smtps://` for implicit TLS, port 465 by default).
package struct SMTPConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// Whether to upgrade a plain connection with `STARTTLS`.
    package enum StartTLSMode: String, Sendable, CaseIterable {
        /// Upgrade, or fail if the server does not offer it (the default).
        case required
        /// Upgrade when the server offers it; otherwise continue in clear text.
        case opportunistic
        /// Never upgrade (a relay on the same host, a test sink).
        case none
    }

    /// The relay's host name or IP address.
    package var host: String
    /// The relay's port.
    package var port: Int
    /// The user name to authenticate as; nil sends without `AUTH`.
    package var username: String?
    /// The password for `username`.
    package var password: String?
    /// The `STARTTLS` policy (ignored with `implicitTLS`).
    package var startTLS: StartTLSMode
    /// TLS from the first byte (SMTPS, usually port 465) instead of `STARTTLS`.
    package var implicitTLS: Bool
    /// Whether to verify the relay's certificate chain and host name. Only tests turn this off.
    package var tlsVerify: Bool
    /// Allows sending credentials over a connection that is not encrypted (off by default).
    package var allowInsecureAuth: Bool
    /// The sender: `no-reply@example.com` or `Example <no-reply@example.com>`.
    package var from: String
    /// The name to greet with in `EHLO`; nil uses the address literal of the local socket.
    package var heloName: String?
    /// The limit for establishing the TCP connection.
    package var connectTimeout: Duration
    /// The limit for each command's reply (and the TLS handshake).
    package var commandTimeout: Duration

    /// Creates a configuration.
    package init(
        host: String,
        port: Int = 587,
        username: String? = nil,
        password: String? = nil,
        startTLS: StartTLSMode = .required,
        implicitTLS: Bool = false,
        tlsVerify: Bool = true,
        allowInsecureAuth: Bool = false,
        from: String,
        heloName: String? = nil,
        connectTimeout: Duration = .seconds(10),
        commandTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.startTLS = startTLS
        self.implicitTLS = implicitTLS
        self.tlsVerify = tlsVerify
        self.allowInsecureAuth = allowInsecureAuth
        self.from = from
        self.heloName = heloName
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    /// Why a URL was refused; the message never echoes the password.
    package struct ParseError: Error, CustomStringConvertible {
        /// What is wrong with the URL.
        package var description: String
    }

    /// Parses an `smtp://` or `smtps://` URL. `defaultFrom` supplies the sender when the URL has no
    /// `from=`; a URL without either is refused. Query parameters: `starttls`, `verify`, `from`,
    /// `helo`, `allow_insecure_auth`; anything else is refused (it is probably a typo).
    package init(url string: String, defaultFrom: String? = nil) throws {
        let example = "smtp://user:password@smtp.example.com:587?starttls=required&from=no-reply@example.com"
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased(),
            scheme == "smtp" || scheme == "smtps"
        else {
            throw ParseError(description: "the SMTP URL must look like \(example)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ParseError(description: "the SMTP URL has no host (expected \(example))")
        }
        let implicitTLS = scheme == "smtps"
        var configuration = SMTPConfiguration(
            host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
            port: components.port ?? (implicitTLS ? 465 : 587),
            username: components.percentEncodedUser.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 },
            password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
            startTLS: implicitTLS ? .none : .required,
            implicitTLS: implicitTLS,
            from: defaultFrom ?? ""
        )
        if configuration.password != nil && configuration.username == nil {
            throw ParseError(description: "the SMTP URL has a password but no user name")
        }
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "starttls":
                guard let mode = StartTLSMode(rawValue: value.lowercased()) else {
                    throw ParseError(description: "starttls in the SMTP URL must be required, opportunistic or none")
                }
                guard !implicitTLS else {
                    throw ParseError(description: "starttls does not apply to smtps:// (TLS from the first byte)")
                }
                configuration.startTLS = mode
            case "verify":
                configuration.tlsVerify = try Self.flag(value, name: "verify")
            case "allow_insecure_auth":
                configuration.allowInsecureAuth = try Self.flag(value, name: "allow_insecure_auth")
            case "from":
                configuration.from = value
            case "helo":
                guard !value.isEmpty, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.[]:".contains($0)) }) else {
                    throw ParseError(description: "helo in the SMTP URL must be a host name")
                }
                configuration.heloName = value
            default:
                throw ParseError(
                    description:
                        "unknown parameter \"\(item.name)\" in the SMTP URL (known: starttls, verify, from, helo, allow_insecure_auth)")
            }
        }
        guard !configuration.from.isEmpty else {
            throw ParseError(description: "no sender: add from=no-reply@example.com to the SMTP URL")
        }
        do {
            _ = try MailAddress(parsing: configuration.from)
        } catch {
            throw ParseError(description: "the sender: \(error)")
        }
        self = configuration
    }

    private static func flag(_ value: String, name: String) throws -> Bool {
        switch value.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ParseError(description: "\(name) in the SMTP URL must be true or false")
        }
    }

    /// The configuration for logs, without the password.
    package var description: String {
        let user = username.map { "\($0)@" } ?? ""
        let tls = implicitTLS ? "implicit TLS" : "starttls=\(startTLS.rawValue)"
        return "smtp\(implicitTLS ? "s" : "")://\(user)\(host):\(port) (\(tls), verify=\(tlsVerify), from \(from))"
    }
}
