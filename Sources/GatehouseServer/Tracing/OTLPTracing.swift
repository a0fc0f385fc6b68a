import GatehouseCore
import Logging
import Synchronization
import Tracing

/// Installs the process's tracer once: `InstrumentationSystem` is global and may be bootstrapped only
/// once, so a second server in the same process (tests) shares the first one's exporter.
enum OTLPTracing {
    private static let installed = Mutex<OTLPExporter?>(nil)

    static func exporter(endpoint: String, serviceName: String, logger: Logger) -> OTLPExporter {
        installed.withLock { installed in
            if let exporter = installed { return exporter }
            let exporter = OTLPExporter(endpoint: endpoint, serviceName: serviceName, logger: logger)
            InstrumentationSystem.bootstrap(OTLPTracer(exporter: exporter))
            TracingSwitch.turnOn()
            installed = exporter
            return exporter
        }
    }
}
