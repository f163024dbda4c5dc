package import AccountCore
import Foundation
package import Logging
package import NIOCore
import NIOPosix
import NIOSSL

/// Submits each message to an SMTP relay on its own connection (RFC 5321 / 6409): greeting, `EHLO`,
/// `STARTTLS` and a second `EHLO` over TLS, `AUTH PLAIN` (or `LOGIN`), `MAIL FROM`, `RCPT TO`,
/// `DATA`, `QUIT`. Every step has a timeout; any failure throws (the outbox retries later).
package struct SMTPTransport: MailTransport {
    /// Where and how to submit.
    package let configuration: SMTPConfiguration
    private let sender: MailAddress
    private let tls: NIOSSLContext
    private let group: any EventLoopGroup
    private let logger: Logger

    /// Creates the transport. Throws for a configuration that can never work: an unparseable
    /// sender, or credentials with TLS turned off and `allowInsecureAuth` unset.
    package init(
        configuration: SMTPConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws {
        self.configuration = configuration
        self.sender = try MailAddress(parsing: configuration.from)
        if configuration.username != nil && !configuration.implicitTLS && configuration.startTLS == .none
            && !configuration.allowInsecureAuth
        {
            throw SMTPError.insecureAuthRefused
        }
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        if !configuration.tlsVerify { tlsConfiguration.certificateVerification = .none }
        self.tls = try NIOSSLContext(configuration: tlsConfiguration)
        self.group = eventLoopGroup
        self.logger = logger
    }

    /// Submits `message` on a new connection; throws at the first step that fails.
    package func send(_ message: EmailMessage) async throws {
        let rendered = try MIMEMessage.render(
            message, from: sender, date: Date(), messageID: "\(Self.randomHex(16))@\(sender.domain)",
            boundary: "=_accountd_\(Self.randomHex(12))")
        let needsUTF8 = !message.to.allSatisfy(\.isASCII) || !sender.address.allSatisfy(\.isASCII)
        let session = try await connect()
        do {
            try await session.reply(to: nil, step: "greeting", expect: [220])
            var extensions = try await hello(session)
            var secure = configuration.implicitTLS
            if !secure && configuration.startTLS != .none {
                if extensions["STARTTLS"] != nil {
                    try await session.reply(to: "STARTTLS", step: "STARTTLS", expect: [220])
                    try await session.startTLS(context: tls, serverHostname: Self.serverName(configuration.host))
                    secure = true
                    extensions = try await hello(session)
                } else if configuration.startTLS == .required {
                    throw SMTPError.startTLSUnavailable
                }
            }
            if let username = configuration.username {
                guard secure || configuration.allowInsecureAuth else { throw SMTPError.insecureAuthRefused }
                try await authenticate(session, username: username, password: configuration.password ?? "", extensions: extensions)
            }
            if needsUTF8 && extensions["SMTPUTF8"] == nil { throw SMTPError.smtpUTF8Unsupported }
            try await session.reply(
                to: "MAIL FROM:<\(sender.address)>\(needsUTF8 ? " SMTPUTF8" : "")", step: "MAIL FROM", expect: [250])
            try await session.reply(to: "RCPT TO:<\(message.to)>", step: "RCPT TO", expect: [250, 251])
            try await session.reply(to: "DATA", step: "DATA", expect: [354])
            try await session.reply(toData: MIMEMessage.smtpData(rendered), step: "end of data", expect: [250])
            logger.debug("smtp: message accepted", metadata: ["relay": "\(configuration.host):\(configuration.port)"])
            // The message is accepted; a failed QUIT changes nothing.
            _ = try? await session.reply(to: "QUIT", step: "QUIT", expect: [221])
            await session.close()
        } catch {
            await session.close()
            throw error
        }
    }

    /// `EHLO` (falling back to `HELO` for an ancient relay); returns the extensions by keyword.
    private func hello(_ session: SMTPSession) async throws -> [String: String] {
        let name = configuration.heloName ?? session.localAddressLiteral
        let reply = try await session.reply(to: "EHLO \(name)", step: "EHLO", expect: [250, 500, 502])
        guard reply.code == 250 else {
            try await session.reply(to: "HELO \(name)", step: "HELO", expect: [250])
            return [:]
        }
        var extensions: [String: String] = [:]
        for line in reply.lines.dropFirst() {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard let keyword = parts.first else { continue }
            var key = keyword.uppercased()
            var parameters = parts.count > 1 ? String(parts[1]) : ""
            // Some relays still announce "AUTH=PLAIN LOGIN".
            if key.hasPrefix("AUTH=") {
                parameters = String(key.dropFirst(5)) + (parameters.isEmpty ? "" : " " + parameters)
                key = "AUTH"
            }
            extensions[key] = [extensions[key], parameters].compactMap { $0 }.joined(separator: " ")
        }
        return extensions
    }

    private func authenticate(_ session: SMTPSession, username: String, password: String, extensions: [String: String]) async throws {
        let offered = Set((extensions["AUTH"] ?? "").uppercased().split(separator: " ").map(String.init))
        let reply: SMTPReply
        if offered.contains("PLAIN") {
            let token = Data(([0] + Array(username.utf8) + [0] + Array(password.utf8))).base64EncodedString()
            reply = try await session.reply(to: "AUTH PLAIN \(token)", step: "AUTH", expect: nil)
        } else if offered.contains("LOGIN") {
            let challenge = try await session.reply(to: "AUTH LOGIN", step: "AUTH", expect: nil)
            guard challenge.code == 334 else { throw SMTPError.authenticationFailed(code: challenge.code, text: challenge.text) }
            let next = try await session.reply(to: Data(username.utf8).base64EncodedString(), step: "AUTH", expect: nil)
            guard next.code == 334 else { throw SMTPError.authenticationFailed(code: next.code, text: next.text) }
            reply = try await session.reply(to: Data(password.utf8).base64EncodedString(), step: "AUTH", expect: nil)
        } else {
            throw SMTPError.authMechanismUnsupported(offered: offered.isEmpty ? "none" : offered.sorted().joined(separator: " "))
        }
        guard reply.code == 235 else { throw SMTPError.authenticationFailed(code: reply.code, text: reply.text) }
    }

    private func connect() async throws -> SMTPSession {
        let tls = self.tls
        let implicitTLS = configuration.implicitTLS
        let serverName = Self.serverName(configuration.host)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if implicitTLS { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName)) }
                    try pipeline.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    try pipeline.addHandler(SMTPClientHandler())
                }
            }
        do {
            let channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
            return try await SMTPSession.attach(to: channel, timeout: TimeAmount(configuration.commandTimeout))
        } catch {
            throw SMTPError.connectFailed("\(configuration.host):\(configuration.port): \(String(describing: error).prefix(200))")
        }
    }

    /// The name for SNI and certificate checks; nil for an IP address (checked against the peer).
    private static func serverName(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    private static func randomHex(_ count: Int) -> String {
        Hex.encode(SystemRandom().bytes(count))
    }
}
