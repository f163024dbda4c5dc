import AccountCore
package import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One log line per event, in `StreamLogHandler`'s format or (``Format/json``) one JSON object per
/// line, with metadata formatted only when a line is written.
///
/// `StreamLogHandler` re-renders all of its metadata every time a key is set. The server sets two
/// keys per request (Hummingbird's request id and ours) and, at the default level, writes no line
/// for most requests, so that rendering was pure cost: 4% of a `verifyIdToken`'s server CPU.
package struct LineLogHandler: LogHandler {
    /// How a line is written.
    package enum Format: String, Sendable {
        /// `2026-11-22T12:48:38+0000 info accountd: key=value [source] message`.
        case text
        /// `{"time":"2026-11-22T12:48:38.123Z","level":"info","label":"accountd","message":…,"source":…,<metadata>}`:
        /// the fixed keys first, then every metadata key as a string (nested values as JSON), one
        /// object per line for Loki or ELK without a parser. The request line carries `request_id`,
        /// `rpc`, `status`, `duration_ms`, and, when the request had one, `trace_id` and `span_id`.
        case json
    }

    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let timestamp: @Sendable () -> String
    private let emit: @Sendable (String) -> Void
    private let format: Format

    /// A handler writing to standard error.
    package static func standardError(label: String, format: Format = .text) -> LineLogHandler {
        LineLogHandler(
            label: label, metadataProvider: LoggingSystem.metadataProvider, format: format,
            timestamp: format == .json ? utcTimestamp : localTimestamp
        ) { line in
            var line = line
            line.withUTF8 { bytes in Self.writeAll(bytes, to: STDERR_FILENO) }
        }
    }

    /// One write(2) per line in the usual case (a line up to PIPE_BUF never interleaves with
    /// another process's); a short write or EINTR continues with the rest.
    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return  // nowhere to report a failing stderr
            }
        }
    }

    /// A handler giving each line to `write`; the timestamp comes from `timestamp` (tests pin it).
    package init(
        label: String, metadataProvider: Logger.MetadataProvider? = nil, format: Format = .text,
        timestamp: @escaping @Sendable () -> String = LineLogHandler.localTimestamp,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.label = label
        self.metadataProvider = metadataProvider
        self.timestamp = timestamp
        self.emit = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        if format == .json {
            emit(jsonLine(event, merged))
            return
        }
        var line = timestamp() + " \(event.level)" + (label.isEmpty ? "" : " " + label) + ":"
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [\(event.source)] \(event.message)\n"
        emit(line)
    }

    /// The event as one JSON object and a newline.
    private func jsonLine(_ event: LogEvent, _ metadata: Logger.Metadata) -> String {
        var object: [String: JSONValue] = [:]
        for (key, value) in metadata { object[key] = Self.json(value) }
        object["time"] = .string(timestamp())
        object["level"] = .string(event.level.rawValue)
        object["label"] = .string(label)
        object["message"] = .string("\(event.message)")
        object["source"] = .string(event.source)
        return JSONValue.object(object).serialized() + "\n"
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let entries): .object(entries.mapValues(json))
        }
    }

    /// UTC with milliseconds, e.g. `2026-11-22T12:48:38.123Z` (JSON lines: no time zone to guess).
    package static let utcTimestamp: @Sendable () -> String = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let stem = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return stem + "." + String(repeating: "0", count: milliseconds < 10 ? 2 : milliseconds < 100 ? 1 : 0) + String(milliseconds) + "Z"
    }

    /// Local time as `StreamLogHandler` prints it, e.g. `2026-11-22T12:48:38+0000`.
    package static let localTimestamp: @Sendable () -> String = {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
