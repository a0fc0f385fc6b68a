import Foundation
import Logging
import Tracing

/// One JSON object per line, for log shippers (`GATEHOUSE_LOG_FORMAT=json`). swift-log ships only a
/// text handler, so this small one is written here.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(.iso8601), "level": event.level.rawValue, "msg": event.message.description,
            "logger": label,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        // Inside a traced request (or hook call): the line joins its trace in the collector's view.
        if let trace = InstrumentationContext.current?.traceContext {
            object["trace_id"] = trace.traceID
            object["span_id"] = trace.spanID
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardError.write(data + Data("\n".utf8))
    }
}
