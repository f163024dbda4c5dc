import NIOCore
import Synchronization

/// One SMTP reply: the code and its text lines (multi-line replies joined).
struct SMTPReply: Sendable {
    var code: Int
    var lines: [String]

    /// The text on one line, for errors.
    var text: String { lines.joined(separator: " ").prefix(200).description }
}

/// A command for ``SMTPClientHandler``: the line (or data) to write, if any, and the promise for
/// the reply that answers it.
struct SMTPRequest: Sendable {
    var payload: ByteBuffer?
    var step: String
    var timeout: TimeAmount
    var reply: EventLoopPromise<SMTPReply>
}

/// Splits the byte stream into replies (`250-…` continuation lines, then `250 …`).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    private var lines: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > 4096 { throw SMTPError.malformedReply("line longer than 4096 bytes") }
            return .needMoreData
        }
        let bytes = buffer.readBytes(length: newline - buffer.readerIndex + 1) ?? []
        var line = String(decoding: bytes, as: UTF8.self)
        while let last = line.last, last.isNewline { line.removeLast() }
        let characters = Array(line)
        guard characters.count >= 3, let code = Int(String(characters[0..<3])), (200...599).contains(code) else {
            throw SMTPError.malformedReply(String(line.prefix(80)))
        }
        lines.append(characters.count > 4 ? String(characters[4...]) : "")
        if characters.count > 3 && characters[3] == "-" {
            if lines.count > 100 { throw SMTPError.malformedReply("more than 100 lines") }
            return .continue
        }
        let reply = SMTPReply(code: code, lines: lines)
        lines = []
        context.fireChannelRead(Self.wrapInboundOut(reply))
        return .continue
    }
}

/// The first failure of a connection, shared by its handler and its ``SMTPSession`` (so a write
/// on an already closed channel still reports why it closed, e.g. a failed TLS handshake).
final class SMTPConnectionState: Sendable {
    private let failure = Mutex<SMTPError?>(nil)

    /// The first failure recorded, if any.
    var firstFailure: SMTPError? { failure.withLock { $0 } }

    /// Records `error` unless a failure is already known; returns the first failure.
    @discardableResult
    func record(_ error: SMTPError) -> SMTPError {
        failure.withLock { current in
            if current == nil { current = error }
            return current ?? error
        }
    }
}

/// Pairs each ``SMTPRequest`` with the next reply (the client never pipelines), enforcing the
/// request's timeout; any failure fails the waiting request and closes the connection.
final class SMTPClientHandler: ChannelDuplexHandler {
    typealias InboundIn = SMTPReply
    typealias OutboundIn = SMTPRequest
    typealias OutboundOut = ByteBuffer

    private var pending: (request: SMTPRequest, timer: Scheduled<Void>)?
    private var unclaimed: [SMTPReply] = []
    let state = SMTPConnectionState()
    /// The last step written, to name a failure that arrives between exchanges (a TLS handshake).
    private var lastStep = "connect"

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = Self.unwrapOutboundIn(data)
        if let failure = state.firstFailure {
            request.reply.fail(failure)
            promise?.fail(failure)
            return
        }
        guard pending == nil else {
            let error = SMTPError.malformedReply("a command was sent before the previous reply")
            request.reply.fail(error)
            promise?.fail(error)
            return
        }
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: request.timeout) {
            self.fail(.timedOut(step: request.step))
            context.close(promise: nil)
        }
        pending = (request, timer)
        lastStep = request.step
        if let payload = request.payload {
            context.writeAndFlush(Self.wrapOutboundOut(payload), promise: promise)
        } else {
            promise?.succeed(())
        }
        if !unclaimed.isEmpty { deliver(unclaimed.removeFirst()) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deliver(Self.unwrapInboundIn(data))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let step = pending?.request.step ?? "after \(lastStep)"
        fail((error as? SMTPError) ?? .network(step: step, detail: String(describing: error).prefix(200).description))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionClosed(step: pending?.request.step ?? "after \(lastStep)"))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let pending {
            fail(.connectionClosed(step: pending.request.step))
        }
    }

    private func deliver(_ reply: SMTPReply) {
        guard let pending else {
            unclaimed.append(reply)
            return
        }
        self.pending = nil
        pending.timer.cancel()
        pending.request.reply.succeed(reply)
    }

    private func fail(_ error: SMTPError) {
        let first = state.record(error)
        guard let pending else { return }
        self.pending = nil
        pending.timer.cancel()
        pending.request.reply.fail(first)
    }
}
