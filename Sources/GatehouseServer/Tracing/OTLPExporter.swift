import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Sends finished spans to an OpenTelemetry collector over OTLP/HTTP with JSON bodies
/// (`POST <endpoint>/v1/traces`), in batches twice a second and once more at shutdown. The queue is
/// bounded: when the collector is down, spans beyond it are dropped and counted, never held in memory
/// without end, and a request never waits for the collector.
final class OTLPExporter: Service, Sendable {
    static let maxQueued = 8192
    static let maxBatch = 512
    /// Its own client, untraced: exporting must not make spans to export.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    let endpoint: String
    let serviceName: String
    let logger: Logger
    private let queue = Mutex<[OTLPSpan.Finished]>([])
    private let dropped = Atomic<Int>(0)

    init(endpoint: String, serviceName: String, logger: Logger) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.serviceName = serviceName
        self.logger = logger
    }

    func add(_ span: OTLPSpan.Finished) {
        let kept = queue.withLock { queue -> Bool in
            guard queue.count < Self.maxQueued else { return false }
            queue.append(span)
            return true
        }
        if !kept { dropped.add(1, ordering: .relaxed) }
    }

    func run() async throws {
        await runEvery(.milliseconds(500)) { await self.send() }
        await send()
    }

    private func send() async {
        while true {
            let batch = queue.withLock { queue -> [OTLPSpan.Finished] in
                let taken = Array(queue.prefix(Self.maxBatch))
                queue.removeFirst(taken.count)
                return taken
            }
            guard !batch.isEmpty else { return }
            var request = HTTPClientRequest(url: endpoint + "/v1/traces")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: OTLPJSON.export(batch, serviceName: serviceName)))
            do {
                let response = try await Self.client.execute(request, timeout: .seconds(5))
                _ = try await response.body.collect(upTo: 64 * 1024)
                if !(200..<300).contains(Int(response.status.code)) {
                    logger.warning("trace export refused", metadata: ["status": "\(response.status.code)", "spans": "\(batch.count)"])
                }
            } catch {
                logger.warning("trace export failed", metadata: ["error_type": "\(type(of: error))", "spans": "\(batch.count)"])
                return
            }
            let lost = dropped.exchange(0, ordering: .relaxed)
            if lost > 0 { logger.warning("trace spans dropped: the export queue was full", metadata: ["spans": "\(lost)"]) }
            if batch.count < Self.maxBatch { return }
        }
    }
}
