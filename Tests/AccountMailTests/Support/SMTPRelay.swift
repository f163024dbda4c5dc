import AccountTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real SMTP server for the tests: aiosmtpd in a Python child process (from
/// `ACCOUNTD_TEST_PYTHON`), on a loopback port, with a throwaway self-signed certificate. It
/// offers STARTTLS (required) and AUTH PLAIN/LOGIN only over TLS, accepts one user, and writes
/// every message it accepts, parsed by Python's `email` package, as JSON into a temporary folder.
final class SMTPRelay: Sendable {
    /// How the relay speaks TLS.
    enum Mode: String {
        /// STARTTLS required before anything else (the submission port).
        case startTLS = "starttls"
        /// TLS from the first byte (SMTPS).
        case implicitTLS = "smtps"
    }

    static let user = "mailer"
    static let password = "correct horse battery staple"

    /// The port it listens on (127.0.0.1).
    let port: Int
    private let directory: URL
    private let process: Process
    private let stdin: Pipe

    /// One message as the relay received it.
    struct Received: Decodable {
        var mailFrom: String
        var rcptTos: [String]
        var subject: String
        var from: String
        var to: String
        var messageID: String
        var date: String
        var contentType: String
        var text: String?
        var html: String?
        var maxLineLength: Int
        var tls: Bool
        var user: String?

        enum CodingKeys: String, CodingKey {
            case mailFrom = "mail_from", rcptTos = "rcpt_tos", subject, from, to, messageID = "message_id", date
            case contentType = "content_type", text, html, maxLineLength = "max_line", tls, user
        }
    }

    private init(port: Int, directory: URL, process: Process, stdin: Pipe) {
        self.port = port
        self.directory = directory
        self.process = process
        self.stdin = stdin
    }

    /// Starts a relay on `port` (a free one by default) and waits until it accepts connections.
    static func start(port: Int? = nil, mode: Mode = .startTLS) async throws -> SMTPRelay {
        guard let python = ProcessInfo.processInfo.environment["ACCOUNTD_TEST_PYTHON"], !python.isEmpty else {
            throw RelayError("ACCOUNTD_TEST_PYTHON is not set: run the suite with scripts/test, which provides a Python with aiosmtpd")
        }
        let port = try port ?? freeLoopbackPort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate: (cert: URL, key: URL)
        do {
            certificate = try await makeCertificate(in: directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let script = directory.appendingPathComponent("relay.py")
        try relayScript.write(to: script, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            script.path, String(port), directory.path, mode.rawValue, certificate.cert.path, certificate.key.path, user, password,
        ]
        // The child exits when this pipe closes, so a crashed test process leaks no relay.
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stderr.log").path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr.log"))
        try process.run()
        let relay = SMTPRelay(port: port, directory: directory, process: process, stdin: stdin)

        let ready = directory.appendingPathComponent("ready")
        let deadline = ContinuousClock.now + .seconds(15)
        while !FileManager.default.fileExists(atPath: ready.path) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                let log = (try? String(contentsOf: directory.appendingPathComponent("stderr.log"), encoding: .utf8)) ?? ""
                relay.stop()
                throw RelayError("the SMTP relay did not start on port \(port):\n\(log.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return relay
    }

    /// The messages accepted so far, in order.
    func messages() throws -> [Received] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
            .sorted { Int($0.dropLast(5)) ?? 0 < Int($1.dropLast(5)) ?? 0 }
        return try files.map {
            try JSONDecoder().decode(Received.self, from: Data(contentsOf: directory.appendingPathComponent($0)))
        }
    }

    /// Waits until at least `count` messages arrived.
    func waitForMessages(_ count: Int) async throws -> [Received] {
        _ = try await eventually { try messages().count >= count }
        return try messages()
    }

    /// Stops the child (SIGTERM, then SIGKILL) and reaps it; removes the folder.
    func stop() {
        try? stdin.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        var waited = 0
        while process.isRunning && waited < 250 {
            usleep(20_000)
            waited += 1
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    struct RelayError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Runs `body` with a started relay and always stops it.
func withSMTPRelay<T>(
    port: Int? = nil, mode: SMTPRelay.Mode = .startTLS, _ body: (SMTPRelay) async throws -> T
) async throws -> T {
    let relay = try await SMTPRelay.start(port: port, mode: mode)
    defer { relay.stop() }
    return try await body(relay)
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
func freeLoopbackPort() throws -> Int {
    #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw SMTPRelay.RelayError("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
        }
    }
    guard bound else { throw SMTPRelay.RelayError("could not bind a loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A throwaway self-signed certificate for localhost/127.0.0.1 (P-256, so it takes milliseconds).
private func makeCertificate(in directory: URL) async throws -> (cert: URL, key: URL) {
    let cert = directory.appendingPathComponent("cert.pem")
    let key = directory.appendingPathComponent("key.pem")
    // Not Foundation's Process: its end is reported through a socket that a relay spawned at the
    // same moment inherits, and the wait would last as long as that relay (ChildProcess).
    let status = try await ChildProcess(
        "/usr/bin/env",
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key.path, "-out", cert.path,
        ], environment: ProcessInfo.processInfo.environment
    ).exit()
    guard status == 0 else { throw SMTPRelay.RelayError("openssl req failed with status \(status)") }
    return (cert, key)
}

/// The relay: argv = port, folder, mode, cert, key, user, password.
private let relayScript = #"""
    import json, os, ssl, sys
    from email import policy
    from email.parser import BytesParser
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    port, folder, mode, cert, key, user, password = sys.argv[1:8]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == user.encode() and auth_data.password == password.encode()
        return AuthResult(success=ok, handled=False, auth_data=auth_data.login.decode() if ok else None)

    class Handler:
        count = 0

        async def handle_DATA(self, server, session, envelope):
            raw = envelope.content
            message = BytesParser(policy=policy.default).parsebytes(raw)
            text = message.get_body(('plain',))
            html = message.get_body(('html',))
            Handler.count += 1
            record = {
                'mail_from': envelope.mail_from, 'rcpt_tos': envelope.rcpt_tos,
                'subject': str(message['subject']), 'from': str(message['from']), 'to': str(message['to']),
                'message_id': str(message['message-id']), 'date': str(message['date']),
                'content_type': message.get_content_type(),
                'text': text.get_content().replace('\r\n', '\n') if text else None,
            'html': html.get_content().replace('\r\n', '\n') if html else None,
                'max_line': max(len(line) for line in raw.split(b'\r\n')),
                'tls': session.ssl is not None or mode == 'smtps', 'user': session.auth_data,
            }
            temporary = os.path.join(folder, '.%d.json' % Handler.count)
            with open(temporary, 'w') as f:
                json.dump(record, f)
            os.rename(temporary, os.path.join(folder, '%d.json' % Handler.count))
            return '250 OK queued'

    options = dict(hostname='127.0.0.1', port=int(port), authenticator=authenticator, auth_required=True, auth_require_tls=True)
    if mode == 'smtps':
        # aiosmtpd only counts STARTTLS as TLS; with TLS from the first byte, AUTH is safe anyway.
        options['auth_require_tls'] = False
        controller = Controller(Handler(), ssl_context=context, **options)
    else:
        controller = Controller(Handler(), tls_context=context, require_starttls=True, **options)
    controller.start()
    open(os.path.join(folder, 'ready'), 'w').close()
    sys.stdin.read()
    controller.stop()
    """#
