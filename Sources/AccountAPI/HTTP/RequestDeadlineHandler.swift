package import NIOCore
package import NIOHTTPTypes

/// Closes a connection whose request has not arrived whole within `deadline` of its head.
///
/// Hummingbird's idle timeout bounds a connection with nothing to read, and so a request head
/// that trickles in (no part is decoded until the head is whole); but every body part resets it,
/// so a client sending one byte of body just inside each idle period would hold a connection, and
/// the request task reading it, for ever. This handler sits behind the HTTP codec and bounds the
/// whole request instead: its timer starts at the head and stops at the end, whatever arrives in
/// between (a pipelined request's clock starts when the responses before it are written). A
/// request still arriving at the deadline has no response worth waiting for, so the connection is
/// closed.
package final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose response has not ended yet.
    private var unanswered = 0
    /// Whether the latest request's body is still arriving.
    private var arriving = false

    /// A handler that gives each request `deadline` from its head to its end.
    package init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            arriving = true
            // A pipelined request waits behind the one being answered (Hummingbird answers one at a
            // time, and stops reading while it does): its clock starts when its turn comes.
            if unanswered == 1 { start(context) }
        case .end:
            arriving = false
            stop()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            if arriving && unanswered == 1 { start(context) }
        }
        context.write(data, promise: promise)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func start(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: deadline) {
            loopBound.value.close(promise: nil)
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}
