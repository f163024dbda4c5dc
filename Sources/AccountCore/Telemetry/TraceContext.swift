import Instrumentation

/// The W3C trace context of the request being served (`traceparent`, `tracestate`): the caller's
/// trace id, and a span id of this server's own, which log lines carry and outgoing calls (the mail
/// and SMS webhooks, identity-provider fetches) name as their parent. Without an incoming
/// `traceparent` there is none: nothing is invented.
package struct TraceContext: Sendable, Equatable {
    /// 32 lower-case hex digits, not all zero.
    package var traceID: String
    /// This server's span: 16 lower-case hex digits.
    package var spanID: String
    /// The caller's span (the incoming `traceparent`'s parent id).
    package var parentID: String
    /// The trace flags, 2 hex digits (`01`: sampled).
    package var flags: String
    /// The incoming `tracestate`, passed on as it came (bounded).
    package var state: String?

    /// The context of the request being served.
    @TaskLocal package static var current: TraceContext?

    /// The context for a request carrying `traceparent` (and `tracestate`); nil when there is none
    /// or it is malformed (W3C Trace Context §3.2: version `00`, or a later version's first four
    /// fields; ids of hex digits, not all zero). `random` makes this server's span id.
    package init?(traceparent: String?, tracestate: String?, random: any RandomSource = SystemRandom()) {
        guard let traceparent, traceparent.utf8.count >= 55, traceparent.utf8.count <= 512 else { return nil }
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, Self.isHex(parts[0]), parts[0] != "ff" else { return nil }
        guard parts[0] != "00" || parts.count == 4 else { return nil }
        guard parts[1].count == 32, Self.isHex(parts[1]), parts[1].contains(where: { $0 != "0" }),
            parts[2].count == 16, Self.isHex(parts[2]), parts[2].contains(where: { $0 != "0" }),
            parts[3].count == 2, Self.isHex(parts[3])
        else { return nil }
        traceID = String(parts[1])
        parentID = String(parts[2])
        flags = String(parts[3])
        spanID = Hex.encode(random.bytes(8))
        if let tracestate, !tracestate.isEmpty, tracestate.utf8.count <= 512, tracestate.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            state = tracestate
        }
    }

    /// The `traceparent` an outgoing call sends: this trace, this server's span as its parent.
    package var traceparent: String { "00-\(traceID)-\(spanID)-\(flags)" }

    /// The headers an outgoing call adds: the current request's trace context, then whatever a
    /// bootstrapped tracer injects (nothing with swift-distributed-tracing's no-op default).
    package static func outgoingHeaders() -> [(String, String)] {
        var headers: [(String, String)] = []
        if let current {
            headers.append(("traceparent", current.traceparent))
            if let state = current.state { headers.append(("tracestate", state)) }
        }
        if let context = InstrumentationContext.current {
            InstrumentationSystem.instrument.inject(context, into: &headers, using: PairInjector())
        }
        return headers
    }

    private static func isHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}

/// Writes injected headers into a list of name-value pairs, replacing one already there.
struct PairInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [(String, String)]) {
        carrier.removeAll { $0.0.lowercased() == key.lowercased() }
        carrier.append((key, value))
    }
}
