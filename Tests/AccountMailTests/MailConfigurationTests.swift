import AccountCore
import AccountMail
import AccountTesting
import Logging
import Testing

// A guard against a hang, not a speed check: the whole suite on two cores can take minutes.
@Suite("Mail configuration and message encoding", .timeLimit(.minutes(5)))
struct MailConfigurationTests {
    @Test("an SMTP URL with every parameter")
    func parsesSMTPURL() throws {
        let configuration = try SMTPConfiguration(
            url: "smtp://us%40er:p%40ss%3Aword@mail.example.com:2525?starttls=opportunistic&from=Acme%20%3Cno-reply@example.com%3E"
                + "&verify=false&helo=app.example.com&allow_insecure_auth=true")
        #expect(configuration.host == "mail.example.com")
        #expect(configuration.port == 2525)
        #expect(configuration.username == "us@er")
        #expect(configuration.password == "p@ss:word")
        #expect(configuration.startTLS == .opportunistic)
        #expect(!configuration.implicitTLS)
        #expect(!configuration.tlsVerify)
        #expect(configuration.allowInsecureAuth)
        #expect(configuration.from == "Acme <no-reply@example.com>")
        #expect(configuration.heloName == "app.example.com")
        #expect(!configuration.description.contains("p@ss"), "the password never reaches logs")
    }

    @Test("defaults: port 587 with STARTTLS required and verification on; smtps:// is 465 with implicit TLS")
    func defaults() throws {
        let plain = try SMTPConfiguration(url: "smtp://relay.internal", defaultFrom: "no-reply@example.com")
        #expect(plain.port == 587 && plain.startTLS == .required && plain.tlsVerify && plain.username == nil)
        #expect(plain.connectTimeout == .seconds(10) && plain.commandTimeout == .seconds(30))
        let implicit = try SMTPConfiguration(url: "smtps://u:p@relay.internal", defaultFrom: "no-reply@example.com")
        #expect(implicit.port == 465 && implicit.implicitTLS)
    }

    @Test(
        "bad SMTP URLs are refused with a message that never echoes the password",
        arguments: [
            "http://relay", "smtp://", "smtp://relay?starttls=maybe", "smtp://relay?verify=perhaps", "smtp://relay?tls=on",
            "smtps://relay?starttls=required", "smtp://relay", "smtp://relay?from=not-an-address", "smtp://:hunter2@relay",
        ])
    func refusesBadURLs(url: String) {
        let error = #expect(throws: SMTPConfiguration.ParseError.self) {
            try SMTPConfiguration(url: url)
        }
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test("the environment picks the transport, naming any missing variable")
    func transportFromEnvironment() throws {
        let logger = TestDatabase.logger
        #expect(try MailConfiguration.makeTransport(from: [:], logger: logger) is LogTransport)
        #expect(try MailConfiguration.makeTransport(from: ["ACCOUNTD_MAIL_TRANSPORT": "log"], logger: logger) is LogTransport)

        func failure(_ environment: [String: String]) -> String {
            do {
                _ = try MailConfiguration.makeTransport(from: environment, logger: logger)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(["ACCOUNTD_MAIL_TRANSPORT": "carrier-pigeon"]).contains("ACCOUNTD_MAIL_TRANSPORT"))
        #expect(failure(["ACCOUNTD_MAIL_TRANSPORT": "smtp"]).contains("ACCOUNTD_SMTP_URL is not set"))
        #expect(failure(["ACCOUNTD_MAIL_TRANSPORT": "smtp", "ACCOUNTD_SMTP_URL": "smtp://relay"]).contains("ACCOUNTD_MAIL_FROM"))
        #expect(
            failure([
                "ACCOUNTD_MAIL_TRANSPORT": "smtp", "ACCOUNTD_SMTP_URL": "smtp://relay?from=a@example.com",
                "ACCOUNTD_MAIL_FROM": "b@example.com",
            ]).contains("set twice"))
        #expect(failure(["ACCOUNTD_MAIL_TRANSPORT": "webhook"]).contains("ACCOUNTD_WEBHOOK_URL is not set"))
        #expect(
            failure(["ACCOUNTD_MAIL_TRANSPORT": "webhook", "ACCOUNTD_WEBHOOK_URL": "https://hooks.example.com/mail"])
                .contains("ACCOUNTD_WEBHOOK_SECRET is not set"))
        #expect(
            failure([
                "ACCOUNTD_MAIL_TRANSPORT": "webhook", "ACCOUNTD_WEBHOOK_URL": "https://hooks.example.com/mail",
                "ACCOUNTD_WEBHOOK_SECRET": "short",
            ]).contains("at least 16"))
        #expect(
            failure([
                "ACCOUNTD_MAIL_TRANSPORT": "smtp", "ACCOUNTD_SMTP_URL": "smtp://u:secret-pw@relay?starttls=none",
                "ACCOUNTD_MAIL_FROM": "a@example.com",
            ]).contains("without TLS"))

        let smtp = try MailConfiguration.makeTransport(
            from: ["ACCOUNTD_MAIL_TRANSPORT": "SMTP", "ACCOUNTD_SMTP_URL": "smtp://relay", "ACCOUNTD_MAIL_FROM": "Acme <a@example.com>"],
            logger: logger)
        #expect((smtp as? SMTPTransport)?.configuration.from == "Acme <a@example.com>")
        let webhook = try MailConfiguration.makeTransport(
            from: [
                "ACCOUNTD_MAIL_TRANSPORT": "webhook", "ACCOUNTD_WEBHOOK_URL": "https://hooks.example.com/mail",
                "ACCOUNTD_WEBHOOK_SECRET": "0123456789abcdef0123",
            ],
            logger: logger)
        #expect(webhook is WebhookTransport)
    }

    @Test("quoted-printable keeps lines short, escapes what it must, and round-trips")
    func quotedPrintable() {
        let text = "café = crème\nend with space \n" + String(repeating: "a", count: 200) + "\n\n"
        let encoded = MIMEMessage.quotedPrintable(text)
        #expect(encoded.split(separator: "\r\n", omittingEmptySubsequences: false).allSatisfy { $0.count <= 76 })
        #expect(encoded.hasPrefix("caf=C3=A9 =3D cr=C3=A8me\r\nend with space=20\r\n"))
        #expect(encoded.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(decodeQuotedPrintable(encoded) == text)
    }

    @Test("non-ASCII headers become RFC 2047 encoded-words of at most 75 characters")
    func encodedWords() {
        let header = MIMEMessage.header("Subject", String(repeating: "Réinitialisez votre mot de passe ", count: 4))
        let lines = header.split(separator: "\r\n")
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count <= 78 })
        #expect(header.contains("=?UTF-8?B?"))
        #expect(MIMEMessage.header("Subject", "Plain words") == "Subject: Plain words")
        #expect(MIMEMessage.header("Subject", "Sneaky\r\nBcc: x") == "Subject: Sneaky Bcc: x")
        let words = MIMEMessage.encodedWords(String(repeating: "é", count: 100))
        #expect(words.allSatisfy { $0.count <= 75 })
    }

    @Test("dot-stuffing doubles leading dots and terminates the data")
    func smtpData() {
        #expect(MIMEMessage.smtpData("a\r\n.b\r\n.\r\n") == "a\r\n..b\r\n..\r\n.\r\n")
    }

    @Test("addresses that could inject headers or commands are refused")
    func addresses() throws {
        #expect(try MailAddress(parsing: "Acme Accounts <no-reply@example.com>").headerValue == "Acme Accounts <no-reply@example.com>")
        #expect(try MailAddress(parsing: "\"Acme, Inc.\" <no-reply@example.com>").headerValue == "\"Acme, Inc.\" <no-reply@example.com>")
        #expect(try MailAddress(parsing: "no-reply@example.com").displayName == nil)
        for bad in ["", "nobody", "a@", "@b", "a b@example.com", "a@example.com>\r\nRCPT TO:<b@example.com", "a@example.com\r\nBcc: x"] {
            #expect(throws: MailAddress.Invalid.self) { try MailAddress(parsing: bad) }
        }
    }

    private func decodeQuotedPrintable(_ encoded: String) -> String {
        var bytes: [UInt8] = []
        let input = Array(encoded.replacing("=\r\n", with: "").replacing("\r\n", with: "\n").utf8)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "="), index + 2 < input.count,
                let value = UInt8(String(decoding: input[index + 1...index + 2], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(input[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
