import Metrics
import Prometheus
import Synchronization

/// The Prometheus registry behind `/metrics`. swift-metrics has one process-wide backend, so this is
/// bootstrapped once per process however many servers a test run starts.
final class MetricsRegistry: Sendable {
    let registry = PrometheusCollectorRegistry()

    static let shared: MetricsRegistry = {
        let shared = MetricsRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: shared.registry))
        return shared
    }()

    func emit() -> [UInt8] { registry.emitToBuffer() }
}
