import Foundation
import Logging

/// Plain text lines on standard error, as swift-log's `StreamLogHandler` writes them, with one
/// difference that matters on every request: metadata is formatted when a line is written, not when it
/// is set. Hummingbird sets a request id on each request's logger, and `StreamLogHandler` formats all
/// of a logger's metadata on every set, so a request that logged nothing still paid for a string it
/// never used (about 3 % of a JWKS request's CPU in the issue 35 profile).
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void

    /// `write` receives each finished line, newline included; standard error unless a test says otherwise.
    public init(label: String, write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = event.metadata.map { metadata.merging($0, uniquingKeysWith: { $1 }) } ?? metadata
        let fields = merged.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        write("\(Date().formatted(.iso8601)) \(event.level) \(label):\(fields) [\(event.source)] \(event.message)\n")
    }
}
