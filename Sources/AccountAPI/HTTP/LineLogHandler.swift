package import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One log line per event, in `StreamLogHandler`'s format, with metadata formatted only when a line
/// is written.
///
/// `StreamLogHandler` re-renders all of its metadata every time a key is set. The server sets two
/// keys per request (Hummingbird's request id and ours) and, at the default level, writes no line
/// for most requests, so that rendering was pure cost: 4% of a `verifyIdToken`'s server CPU.
package struct LineLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let timestamp: @Sendable () -> String
    private let emit: @Sendable (String) -> Void

    /// A handler writing to standard error.
    package static func standardError(label: String) -> LineLogHandler {
        LineLogHandler(label: label, metadataProvider: LoggingSystem.metadataProvider) { line in
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
        label: String, metadataProvider: Logger.MetadataProvider? = nil,
        timestamp: @escaping @Sendable () -> String = LineLogHandler.localTimestamp,
        write: @escaping @Sendable (String) -> Void
    ) {
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
        var line = timestamp() + " \(event.level)" + (label.isEmpty ? "" : " " + label) + ":"
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [\(event.source)] \(event.message)\n"
        emit(line)
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
