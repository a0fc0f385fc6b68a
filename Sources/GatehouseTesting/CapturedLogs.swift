import Logging
import Synchronization

/// Every log line a test server wrote, message and metadata, for asserting what never appears there.
public final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger at `trace`, the most talkative level, writing here.
    public func logger(label: String) -> Logger {
        var logger = Logger(label: label) { _ in CapturingLogHandler(sink: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct CapturingLogHandler: LogHandler {
    let sink: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        sink.append("\(event.level) \(event.message) \(all.map { "\($0)=\($1)" }.sorted().joined(separator: " "))")
    }
}
