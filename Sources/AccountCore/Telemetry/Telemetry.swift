package import CoreMetrics

/// Where a component reports its figures: the metrics backend the composition chose (Prometheus in
/// the server, nothing in unit tests), behind swift-metrics' `MetricsFactory`. Each server has its
/// own, so two servers in one process (the test suite) never mix their counts.
///
/// Every figure is a ``MetricFamily``; label values must be bounded (the family's doc says which).
package struct Telemetry: Sendable {
    /// The backend.
    package let factory: any MetricsFactory

    /// Figures go to `factory`.
    package init(factory: any MetricsFactory) {
        self.factory = factory
        self.isOff = false
    }

    /// Figures go nowhere.
    package static let off = Telemetry(factory: NOOPMetricsHandler.instance, isOff: true)

    /// Whether figures go nowhere (a component may then skip measuring).
    package let isOff: Bool

    private init(factory: any MetricsFactory, isOff: Bool) {
        self.factory = factory
        self.isOff = isOff
    }

    /// Adds `amount` to the counter `family` with `labels` (in the family's label order).
    package func count(_ family: MetricFamily, _ labels: [String] = [], by amount: Int = 1) {
        Counter(label: family.rawValue, dimensions: dimensions(family, labels), factory: factory).increment(by: amount)
    }

    /// Records `duration` in the histogram `family`.
    package func record(_ family: MetricFamily, _ labels: [String] = [], _ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Timer(label: family.rawValue, dimensions: dimensions(family, labels), factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Sets the gauge `family`.
    package func set(_ family: MetricFamily, _ labels: [String] = [], _ value: Double) {
        Meter(label: family.rawValue, dimensions: dimensions(family, labels), factory: factory).set(value)
    }

    /// The gauge `family`, for a component that moves it up and down (requests in flight).
    package func meter(_ family: MetricFamily, _ labels: [String] = []) -> Meter {
        Meter(label: family.rawValue, dimensions: dimensions(family, labels), factory: factory)
    }

    private func dimensions(_ family: MetricFamily, _ values: [String]) -> [(String, String)] {
        assert(values.count == family.labels.count, "\(family.rawValue) takes \(family.labels)")
        return Array(zip(family.labels, values))
    }
}
