package import NIOCore
package import NIOHTTPTypes

/// Closes a connection whose request has not arrived whole within `deadline` of its head.
///
/// Hummingbird's idle timeout bounds a connection with nothing to read, and so a request head
/// that trickles in (no part is decoded until the head is whole); but every body part resets it,
/// so a client sending one byte of body just inside each idle period would hold a connection, and
/// the request task reading it, for ever. This handler sits behind the HTTP codec and bounds the
/// whole request instead: its timer starts at the head and stops at the end, whatever arrives in
/// between. The response is the responder's business; a request still arriving at the deadline
/// has no response worth waiting for, so the connection is closed.
package final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?

    /// A handler that gives each request `deadline` from its head to its end.
    package init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            timer?.cancel()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: deadline) {
                loopBound.value.close(promise: nil)
            }
        case .end:
            timer?.cancel()
            timer = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }
}
