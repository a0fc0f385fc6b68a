import Foundation
import Tracing

/// A tracer whose spans go to an OpenTelemetry collector (``OTLPExporter``), propagated with W3C
/// `traceparent` headers. Written here rather than taken from swift-otel: its only version in the
/// package mirror builds its gRPC exporter too unless the manifest selects traits, which needs a
/// newer manifest format than the SDK's users may have, and several minutes more of every CI build.
struct OTLPTracer: Tracer {
    let exporter: OTLPExporter

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> OTLPSpan {
        let parentContext = context()
        let parent = parentContext.traceContext
        let exporter = self.exporter
        return OTLPSpan(
            name: operationName, context: parentContext, trace: TraceContext.child(of: parent), parentSpanID: parent?.spanID, kind: kind,
            start: instant().nanosecondsSinceEpoch, onEnd: { exporter.add($0) })
    }

    func activeSpan(identifiedBy context: InstrumentationContext) -> OTLPSpan? { nil }

    /// Nothing to do at once: the exporter sends what is queued every half second and at shutdown.
    func forceFlush() {}

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: "traceparent", from: carrier), let remote = TraceContext(traceparent: header) else {
            return
        }
        context.traceContext = remote
    }

    func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let trace = context.traceContext else { return }
        injector.inject(trace.traceparent, forKey: "traceparent", into: &carrier)
    }
}
