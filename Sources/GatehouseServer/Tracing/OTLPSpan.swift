import Foundation
import Synchronization
import Tracing

/// One span of ``OTLPTracer``: mutable until it ends, then handed to the exporter once.
final class OTLPSpan: Span {
    struct Finished: Sendable {
        var trace: TraceContext
        var parentSpanID: String?
        var name: String
        var kind: SpanKind
        var start: UInt64
        var end: UInt64
        var attributes: SpanAttributes
        var events: [SpanEvent]
        var status: SpanStatus?
    }

    private struct State {
        var name: String
        var attributes: SpanAttributes = [:]
        var events: [SpanEvent] = []
        var status: SpanStatus?
        var ended = false
    }

    let context: InstrumentationContext
    private let trace: TraceContext
    private let parentSpanID: String?
    private let kind: SpanKind
    private let start: UInt64
    private let state: Mutex<State>
    private let onEnd: @Sendable (Finished) -> Void

    init(
        name: String, context: InstrumentationContext, trace: TraceContext, parentSpanID: String?, kind: SpanKind, start: UInt64,
        onEnd: @escaping @Sendable (Finished) -> Void
    ) {
        var context = context
        context.traceContext = trace
        self.context = context
        self.trace = trace
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.start = start
        self.state = Mutex(State(name: name))
        self.onEnd = onEnd
    }

    var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { if !$0.ended { $0.name = newValue } } }
    }

    var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { if !$0.ended { $0.attributes = newValue } } }
    }

    var isRecording: Bool { state.withLock { !$0.ended } }

    func setStatus(_ status: SpanStatus) { state.withLock { if !$0.ended { $0.status = status } } }

    func addEvent(_ event: SpanEvent) { state.withLock { if !$0.ended { $0.events.append(event) } } }

    /// Only the error's type: an error's description may hold what a user typed.
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        var attributes = attributes
        attributes["exception.type"] = String(describing: type(of: error))
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: attributes))
    }

    /// Links are not exported (nothing here makes them).
    func addLink(_ link: SpanLink) {}

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let finished: Finished? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return Finished(
                trace: trace, parentSpanID: parentSpanID, name: state.name, kind: kind, start: start, end: instant().nanosecondsSinceEpoch,
                attributes: state.attributes, events: state.events, status: state.status)
        }
        if let finished { onEnd(finished) }
    }
}
