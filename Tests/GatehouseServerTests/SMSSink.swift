import Foundation
import Hummingbird
import NIOCore

/// A stand-in SMS gateway on a real socket: records each POST, and fails the first few with 503.
actor SMSSink {
    struct Message: Decodable, Sendable {
        var to: String
        var body: String
        var authorization: String?
    }

    private(set) var received: [Message] = []
    private(set) var attempts = 0
    private var failuresLeft: Int
    nonisolated let port: Int
    private var task: Task<Void, any Error>?

    private init(failFirst: Int, port: Int) {
        self.failuresLeft = failFirst
        self.port = port
    }

    static func start(failFirst: Int) async throws -> SMSSink {
        // Bind to port 0, learn the port, then hand the handler the sink.
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let box = SinkBox()
        let router = Router()
        router.post("/sms") { request, context -> Response in
            let data = try await request.body.collect(upTo: 1 << 16)
            guard var message = try? JSONDecoder().decode(Message.self, from: Data(buffer: data)) else {
                return Response(status: .badRequest)
            }
            message.authorization = request.headers[.authorization]
            return Response(status: await box.sink!.record(message) ? .ok : .serviceUnavailable)
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = portStream.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let sink = SMSSink(failFirst: failFirst, port: port)
        await box.set(sink)
        await sink.setTask(task)
        return sink
    }

    private func setTask(_ task: Task<Void, any Error>) { self.task = task }

    /// Whether to accept this one.
    func record(_ message: Message) -> Bool {
        attempts += 1
        if failuresLeft > 0 {
            failuresLeft -= 1
            return false
        }
        received.append(message)
        return true
    }

    func stop() async {
        task?.cancel()
        _ = try? await task?.value
    }
}

/// Lets the route closure reach the sink created after the server started.
actor SinkBox {
    var sink: SMSSink?
    func set(_ sink: SMSSink) { self.sink = sink }
}
