import Logging
import Synchronization
import Testing

@testable import AccountAPI

@Suite("log lines")
struct LineLogHandlerTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk full" }
    }

    /// The lines a handler wrote, in order.
    final class Lines: Sendable {
        private let written = Mutex<[String]>([])
        func append(_ line: String) { written.withLock { $0.append(line) } }
        var all: [String] { written.withLock { $0 } }
    }

    /// A logger whose lines land in `lines`, with a pinned timestamp.
    static func logger(provider: Logger.MetadataProvider? = nil) -> (Logger, Lines) {
        let lines = Lines()
        let handler = LineLogHandler(label: "accountd", metadataProvider: provider, timestamp: { "T" }) { line in
            lines.append(line)
        }
        var logger = Logger(label: "accountd") { _ in handler }
        logger.logLevel = .info
        return (logger, lines)
    }

    @Test("one line per event in StreamLogHandler's layout, metadata sorted, rendered when written")
    func layout() {
        var (logger, lines) = Self.logger()
        logger.info("started")
        logger[metadataKey: "request_id"] = "r1"
        logger[metadataKey: "hb.request.id"] = "7"
        logger.debug("below the level: no line")
        logger.warning("slow", metadata: ["ms": "1200"])
        logger[metadataKey: "request_id"] = "r2"
        logger.error("failed", error: Failure(), metadata: ["request_id": "explicit"])
        #expect(
            lines.all == [
                "T info accountd: [AccountAPITests] started\n",
                "T warning accountd: hb.request.id=7 ms=1200 request_id=r1 [AccountAPITests] slow\n",
                "T error accountd: error.message=disk full error.type=AccountAPITests.LineLogHandlerTests.Failure hb.request.id=7 "
                    + "request_id=explicit [AccountAPITests] failed\n",
            ]
        )
        #expect(logger[metadataKey: "request_id"] == "r2", "a call's metadata does not stick to the logger")
    }

    @Test("a metadata provider's values join the line; a call's own metadata wins over them")
    func provider() {
        let provider = Logger.MetadataProvider { ["trace": "abc", "ms": "0"] }
        let (logger, lines) = Self.logger(provider: provider)
        logger.info("done", metadata: ["ms": "5"])
        #expect(lines.all == ["T info accountd: ms=5 trace=abc [AccountAPITests] done\n"])
    }

    @Test("the default timestamp is local time in StreamLogHandler's format")
    func timestamp() {
        let stamp = LineLogHandler.localTimestamp()
        #expect(stamp.count == 24, "\(stamp)")
        #expect(stamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}/) != nil, "\(stamp)")
    }
}
