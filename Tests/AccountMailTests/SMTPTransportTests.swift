import AccountCore
import AccountMail
import AccountTesting
import Foundation
import Logging
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A guard against a hang, not a speed check: the whole suite on two cores can take minutes.
@Suite("SMTP transport against a real aiosmtpd relay", .timeLimit(.minutes(5)))
struct SMTPTransportTests {
    static let link =
        "https://auth.example.com/__/auth/action?mode=verifyEmail&oobCode=" + String(repeating: "Zy9-", count: 40) + "&lang=fr"

    static func configuration(port: Int, password: String = SMTPRelay.password) -> SMTPConfiguration {
        SMTPConfiguration(
            host: "127.0.0.1", port: port, username: SMTPRelay.user, password: password, startTLS: .required, tlsVerify: false,
            from: "Équipe Acmé <no-reply@example.com>", commandTimeout: .seconds(5))
    }

    @Test("STARTTLS, AUTH and a multipart message with a non-ASCII subject arrive intact")
    func deliversOverStartTLS() async throws {
        try await withSMTPRelay { relay in
            let message = EmailTemplates.message(
                kind: .verifyEmail, to: "ann@example.com", link: Self.link, lang: "fr", productName: "Acmé <Beta>")
            let transport = try SMTPTransport(configuration: Self.configuration(port: relay.port), logger: TestDatabase.logger)
            try await transport.send(message)

            let received = try #require(try await relay.waitForMessages(1).first)
            #expect(received.subject == message.subject)
            #expect(received.subject.contains("é"))
            #expect(received.mailFrom == "no-reply@example.com")
            #expect(received.rcptTos == ["ann@example.com"])
            #expect(received.from == "Équipe Acmé <no-reply@example.com>")
            #expect(received.to == "ann@example.com")
            #expect(received.contentType == "multipart/alternative")
            #expect(received.text == message.textBody)
            #expect(received.html == message.htmlBody)
            #expect(received.text?.contains(Self.link) == true)
            #expect(received.html?.contains(Self.link.replacing("&", with: "&amp;")) == true)
            #expect(received.maxLineLength <= 78)
            #expect(received.messageID.hasSuffix("@example.com>"))
            #expect(!received.date.isEmpty)
            #expect(received.tls)
            #expect(received.user == SMTPRelay.user)
        }
    }

    @Test("dot-stuffing: lines that start with a dot arrive unchanged")
    func dotStuffing() async throws {
        try await withSMTPRelay { relay in
            let text = ".\n..two\n.leading dot\n\(Self.link)\ntrailing space \nend"
            let message = EmailMessage(
                kind: .emailSignIn, to: "bob@example.com", subject: "Dots", textBody: text, htmlBody: "<p>.</p>\n.\n", link: Self.link)
            try await SMTPTransport(configuration: Self.configuration(port: relay.port), logger: TestDatabase.logger).send(message)
            let received = try #require(try await relay.waitForMessages(1).first)
            #expect(received.text == text)
            #expect(received.html == "<p>.</p>\n.\n")
        }
    }

    @Test("implicit TLS (smtps://) delivers too")
    func deliversOverImplicitTLS() async throws {
        try await withSMTPRelay(mode: .implicitTLS) { relay in
            var configuration = try SMTPConfiguration(
                url: "smtps://\(SMTPRelay.user):correct%20horse%20battery%20staple@127.0.0.1:\(relay.port)?verify=false",
                defaultFrom: "no-reply@example.com")
            configuration.commandTimeout = .seconds(5)
            let message = EmailTemplates.message(
                kind: .passwordReset, to: "cy@example.com", link: Self.link, lang: "en", productName: "Acme")
            try await SMTPTransport(configuration: configuration, logger: TestDatabase.logger).send(message)
            let received = try #require(try await relay.waitForMessages(1).first)
            #expect(received.subject == "Reset your password for Acme")
            #expect(received.user == SMTPRelay.user)
        }
    }

    @Test("a wrong password is an error and nothing is sent")
    func wrongPassword() async throws {
        try await withSMTPRelay { relay in
            let transport = try SMTPTransport(
                configuration: Self.configuration(port: relay.port, password: "wrong"), logger: TestDatabase.logger)
            let message = EmailTemplates.message(
                kind: .verifyEmail, to: "ann@example.com", link: Self.link, lang: "en", productName: "Acme")
            let error = await #expect(throws: SMTPError.self) { try await transport.send(message) }
            guard case .authenticationFailed(let code, _) = error else {
                Issue.record("expected an authentication failure, got \(String(describing: error))")
                return
            }
            #expect(code == 535)
            #expect(!(error?.description.contains("wrong") ?? true), "the password never appears in the error")
            try await Task.sleep(for: .milliseconds(100))
            let received = try relay.messages()
            #expect(received.isEmpty)
        }
    }

    @Test("certificate verification is on by default: a self-signed relay is refused")
    func verifiesCertificates() async throws {
        try await withSMTPRelay { relay in
            var configuration = Self.configuration(port: relay.port)
            configuration.tlsVerify = true
            let message = EmailTemplates.message(
                kind: .verifyEmail, to: "ann@example.com", link: Self.link, lang: "en", productName: "Acme")
            let error = await #expect(throws: SMTPError.self) {
                try await SMTPTransport(configuration: configuration, logger: TestDatabase.logger).send(message)
            }
            #expect(error?.description.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(String(describing: error))")
            let received = try relay.messages()
            #expect(received.isEmpty)
        }
    }

    @Test("credentials are never sent in clear text unless allowed")
    func refusesInsecureAuth() throws {
        var configuration = Self.configuration(port: 25)
        configuration.startTLS = .none
        #expect(throws: SMTPError.insecureAuthRefused) { try SMTPTransport(configuration: configuration, logger: TestDatabase.logger) }
        configuration.allowInsecureAuth = true
        _ = try SMTPTransport(configuration: configuration, logger: TestDatabase.logger)
    }

    @Test("nothing listening: a quick connect error")
    func connectionRefused() async throws {
        let transport = try SMTPTransport(configuration: Self.configuration(port: try freeLoopbackPort()), logger: TestDatabase.logger)
        let message = EmailTemplates.message(kind: .verifyEmail, to: "ann@example.com", link: Self.link, lang: "en", productName: "Acme")
        let error = await #expect(throws: SMTPError.self) { try await transport.send(message) }
        guard case .connectFailed = error else {
            Issue.record("expected connectFailed, got \(String(describing: error))")
            return
        }
    }

    @Test("a relay that never greets times out")
    func silentRelayTimesOut() async throws {
        let (fd, port) = try silentListener()
        defer { close(fd) }
        var configuration = Self.configuration(port: port)
        configuration.commandTimeout = .milliseconds(300)
        let transport = try SMTPTransport(configuration: configuration, logger: TestDatabase.logger)
        let message = EmailTemplates.message(kind: .verifyEmail, to: "ann@example.com", link: Self.link, lang: "en", productName: "Acme")
        let started = ContinuousClock.now
        await #expect(throws: SMTPError.timedOut(step: "greeting")) { try await transport.send(message) }
        // Far below the 30 s default: the 300 ms command timeout fired (the bound is loose for loaded machines).
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    /// A socket that accepts connections (the kernel does) but never says a word.
    private func silentListener() throws -> (Int32, Int) {
        let port = try freeLoopbackPort()
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok, listen(fd, 8) == 0 else {
            close(fd)
            throw SMTPRelay.RelayError("could not listen on \(port)")
        }
        return (fd, port)
    }
}
