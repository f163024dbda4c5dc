import NIOCore
import NIOSSL

/// One connection to the relay: writes a line and awaits its reply, one at a time.
struct SMTPSession: Sendable {
    let channel: any Channel
    let state: SMTPConnectionState
    let timeout: TimeAmount

    /// Wraps a connected channel whose pipeline ends with an ``SMTPClientHandler``.
    static func attach(to channel: any Channel, timeout: TimeAmount) async throws -> SMTPSession {
        let state = try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: SMTPClientHandler.self).state
        }.get()
        return SMTPSession(channel: channel, state: state, timeout: timeout)
    }

    /// The `EHLO` argument when none is configured: the local address as an RFC 5321 literal.
    var localAddressLiteral: String {
        guard let ip = channel.localAddress?.ipAddress else { return "[127.0.0.1]" }
        return ip.contains(":") ? "[IPv6:\(ip)]" : "[\(ip)]"
    }

    /// Sends `line` (nil sends nothing: the greeting) and returns the reply; throws
    /// ``SMTPError/rejected(step:code:text:)`` when its code is not in `expect` (nil accepts any).
    @discardableResult
    func reply(to line: String?, step: String, expect: Set<Int>?) async throws -> SMTPReply {
        try await exchange(line.map { ByteBuffer(string: $0 + "\r\n") }, step: step, expect: expect)
    }

    /// Sends the message data (already dot-stuffed and terminated) and returns the reply.
    @discardableResult
    func reply(toData data: String, step: String, expect: Set<Int>) async throws -> SMTPReply {
        try await exchange(ByteBuffer(string: data), step: step, expect: expect)
    }

    private func exchange(_ payload: ByteBuffer?, step: String, expect: Set<Int>?) async throws -> SMTPReply {
        let promise = channel.eventLoop.makePromise(of: SMTPReply.self)
        let channel = self.channel
        let state = self.state
        // A write on a closed channel never reaches the handler: fail the reply with the reason.
        channel.writeAndFlush(SMTPRequest(payload: payload, step: step, timeout: timeout, reply: promise)).whenFailure { _ in
            promise.fail(state.firstFailure ?? .connectionClosed(step: step))
        }
        // The handler enforces `timeout`; this backstop only matters if the pipeline lost the request.
        let backstop = channel.eventLoop.scheduleTask(in: timeout + .seconds(1)) {
            promise.fail(state.firstFailure ?? .timedOut(step: step))
            channel.close(promise: nil)
        }
        defer { backstop.cancel() }
        let reply = try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
        if let expect, !expect.contains(reply.code) {
            throw SMTPError.rejected(step: step, code: reply.code, text: reply.text)
        }
        return reply
    }

    /// Puts TLS under the connection (after `220` to `STARTTLS`); the handshake runs before the
    /// next write goes out, so its failure or timeout fails the next exchange.
    func startTLS(context: NIOSSLContext, serverHostname: String?) async throws {
        let channel = self.channel
        try await channel.eventLoop.submit {
            let handler = try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
        }.get()
    }

    func close() async {
        try? await channel.close()
    }
}
