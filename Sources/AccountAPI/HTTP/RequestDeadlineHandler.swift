package import CoreMetrics
import HTTPTypes
package import NIOCore
import NIOHTTP1
package import NIOHTTPTypes

/// Bounds each request from its head to the head of its response: a request still arriving at
/// the deadline closes its connection; one that arrived but has no answer by then gets 503
/// `UNAVAILABLE` with `Retry-After`, and its connection closes.
///
/// Hummingbird's idle timeout bounds a connection with nothing to read, and so a request head
/// that trickles in (no part is decoded until the head is whole); but every body part resets it,
/// so a client sending one byte of body just inside each idle period would hold a connection, and
/// the request task reading it, for ever. This handler sits behind the HTTP codec and bounds the
/// whole request instead: its timer starts at the head and stops when the response starts,
/// whatever arrives in between (a pipelined request's clock starts when the responses before it
/// are written). The database bounds its own waits well inside the deadline (the request deadline,
/// the lock and statement timeouts); the answer here is the backstop for a wait nothing else
/// bounds, such as a statement written to a connection that closed under it, which PostgresNIO
/// never completes. Whatever the request's task does after that answer goes nowhere: its
/// response is dropped.
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
    /// Whether a response has started and not ended.
    private var responding = false
    /// Whether the response being written says `Connection: close`.
    private var closing = false
    /// Whether the answer is out and the connection only drops what still arrives.
    private var draining = false
    /// Whether this handler answered 503 for a request past its deadline; the request's own
    /// response, if it ever comes, is dropped.
    private var answeredForRequest = false

    /// Counts the 503s this handler answers (``MetricFamily/httpTimeouts``, `http_timeout`).
    private let timeouts: Counter?

    /// A handler that gives each request `deadline` from its head to its response.
    package init(deadline: TimeAmount, timeouts: Counter? = nil) {
        self.deadline = deadline
        self.timeouts = timeouts
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if draining { return }
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            arriving = true
            // A pipelined request waits behind the one being answered (Hummingbird answers one at a
            // time): its clock starts when its turn comes.
            if unanswered == 1 { start(context) }
        case .end:
            arriving = false
            // Answered before its body was read (a refused caller): the body has now been read
            // off, and the clock stops.
            if unanswered == 0 { stop() }
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if answeredForRequest {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head):
            responding = true
            // The clock keeps running while the request's body still arrives: a caller answered
            // before its body was read must not trickle the rest in for ever.
            if !arriving && !draining { stop() }
            closing = head.headerFields[.connection]?.lowercased() == "close"
        case .end:
            responding = false
            unanswered = max(0, unanswered - 1)
            if closing {
                // A response that says `Connection: close` (a 413 whose body was left unread, a
                // malformed request) ends the connection once written, whatever the request said.
                let promise = promise ?? context.eventLoop.makePromise()
                close(context, after: promise.futureResult, linger: true)
                context.write(data, promise: promise)
                return
            }
            if unanswered >= 1 { start(context) }
        case .body:
            break
        }
        context.write(data, promise: promise)
    }

    /// The deadline passed: a request still arriving loses its connection; one waiting for its
    /// answer gets 503 in Firebase's shape, then the connection closes.
    private func expired(_ context: ChannelHandlerContext) {
        timer = nil
        if arriving {
            context.close(promise: nil)
            return
        }
        guard !responding, unanswered > 0 else { return }
        timeouts?.increment()
        var error = APIError.unavailable("The request took too long to answer, retry shortly.")
        error.headers[.connection] = "close"
        // The request arrived whole, so nothing is left to read: the connection closes outright
        // once the answer is out, and the request's task sees its client gone and commits nothing.
        writeDirectly(error, context, linger: false)
        answeredForRequest = true
    }

    /// Writes a whole error response from here, below Hummingbird, then closes the connection.
    private func writeDirectly(_ error: APIError, _ context: ChannelHandlerContext, linger: Bool = true) {
        let body = WireEncoding.errorBody(error)
        var head = HTTPResponse(status: error.httpStatus)
        head.headerFields = error.headers
        head.headerFields[.contentType] = "application/json; charset=UTF-8"
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        close(context, after: context.writeAndFlush(wrapOutboundOut(.end(nil))), linger: linger)
    }

    /// Closes the connection once `written` completes: lingering (``lingeringClose(_:)``) when
    /// the client may still be sending, outright when nothing is left to read.
    private func close(_ context: ChannelHandlerContext, after written: EventLoopFuture<Void>, linger: Bool) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.assumeIsolated().whenComplete { _ in
            let (handler, context) = loopBound.value
            if linger { handler.lingeringClose(context) } else { context.close(promise: nil) }
        }
    }

    /// Bytes the HTTP parser refused between requests (a garbled request line or header) get
    /// Firebase's error shape, not Hummingbird's empty 400, and the connection closes after it: its
    /// bytes can no longer be framed. A parse error inside a request's body goes on to the request,
    /// whose body read answers it (``APIResponder``).
    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if draining { return }
        guard error is HTTPParserError, unanswered == 0 else {
            context.fireErrorCaught(error)
            return
        }
        // A body being read off after its request was answered: no second answer, just the end.
        if arriving {
            context.close(promise: nil)
            return
        }
        writeDirectly(.malformedHTTP, context)
    }

    /// Ends a connection whose client may still be sending (the rest of a refused body): the
    /// answer is out, so the write side closes at once (the client sees the end), and what still
    /// arrives is read and dropped until the client closes or ``lingerLimit`` passes. Closing both
    /// sides at once would answer the unread bytes with a reset, which can destroy the answer
    /// before the client reads it.
    private func lingeringClose(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        stop()
        context.close(mode: .output, promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerLimit) {
            loopBound.value.close(promise: nil)
        }
    }

    /// How long a closing connection keeps reading (and dropping) what its client still sends.
    static let lingerLimit = TimeAmount.seconds(5)

    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func start(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: deadline) {
            let (handler, context) = loopBound.value
            handler.expired(context)
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}
