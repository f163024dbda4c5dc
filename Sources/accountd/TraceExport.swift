import Logging
import OTel
import ServiceLifecycle

/// The optional OTLP/HTTP exporter of the spans accountd makes (each RPC, each database
/// transaction, each outgoing call; swift-distributed-tracing's no-ops otherwise), through
/// swift-otel. It is on when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; the other standard `OTEL_*` variables of traces
/// apply (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, headers, timeouts). Only traces
/// go there: metrics stay with `/metrics`, logs with standard error, so the variables that would
/// turn swift-otel's own logs or metrics on are not passed to it.
enum TraceExport {
    /// The exporter's service (to run beside the server), or nil when no endpoint is configured.
    static func bootstrap(environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil else {
            return nil
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "accountd"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.propagators = [.traceContext]
        configuration.diagnosticLogger = .custom(logger)
        let kept = environment.filter { name, _ in
            !name.hasPrefix("OTEL_LOGS_") && !name.hasPrefix("OTEL_METRICS_") && name != "OTEL_EXPORTER_OTLP_PROTOCOL"
                && name != "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
        }
        let service = try OTel.bootstrap(configuration: configuration, environment: kept)
        logger.notice(
            "exporting traces over OTLP/HTTP",
            metadata: [
                "endpoint": "\(environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? environment["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "")"
            ])
        return service
    }
}
