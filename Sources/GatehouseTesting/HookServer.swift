import Foundation
import Hummingbird
import Synchronization
import NIOCore
import NIOFoundationEssentialsCompat

/// An operator's hook endpoint, webhook receiver or SMS gateway on a real socket: records every POST
/// (headers and raw body) and answers as the test says.
public actor HookServer {
    public struct Received: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    public struct Answer: Sendable {
        public var status: Int
        public var body: String
        public var delay: Duration?

        public init(status: Int = 200, body: String = #"{"decision":"allow"}"#, delay: Duration? = nil) {
            self.status = status
            self.body = body
            self.delay = delay
        }
    }

    public typealias Responder = @Sendable (Received) -> Answer

    public private(set) var received: [Received] = []
    /// Answers sent so far (a delayed answer counts once its delay is over).
    public private(set) var answered = 0
    public nonisolated let port: Int
    private var task: Task<Void, any Error>?
    private let responder: Responder

    private init(port: Int, responder: @escaping Responder) {
        self.port = port
        self.responder = responder
    }

    /// `port: 0` picks a free one.
    public static func start(port: Int = 0, _ responder: @escaping Responder = { _ in Answer() }) async throws -> HookServer {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let box = HookServerBox()
        let router = Router()
        // POST for hooks, webhooks and SMS; GET for documents it serves (a provider's keys at `/jwks`, a
        // password range service's buckets at `/range/<prefix>`, recorded under the path asked for).
        for (method, path) in [
            (HTTPRequest.Method.post, "/hook"), (.post, "/events"), (.post, "/sms"), (.post, "/other"), (.get, "/jwks"),
            (.get, "/range/{prefix}"), (.post, "/siteverify"),
        ] {
            router.on(RouterPath(path), method: method) { request, context -> Response in
                let data = try await request.body.collect(upTo: 1 << 20)
                var headers: [String: String] = [:]
                for field in request.headers { headers[field.name.canonicalName] = field.value }
                let recorded = path.contains("{") ? request.uri.description : path
                let answer = await box.server!.record(Received(path: recorded, headers: headers, body: Data(buffer: data)))
                if let delay = answer.delay { try await Task.sleep(for: delay) }
                await box.server!.markAnswered()
                return Response(
                    status: .init(code: answer.status), headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: answer.body)))
            }
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
        // A server that cannot bind (the port is taken by another process) ends its run without ever
        // running: the stream must end then too, or the wait for the port below never returns (a test
        // run hung this way on ports held by processes a killed run had left behind).
        let task = Task {
            defer { portContinuation.finish() }
            try await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = portStream.makeAsyncIterator()
        guard let bound = await iterator.next(), bound != 0 else {
            _ = try? await task.value
            throw PortUnavailable(port: port)
        }
        let server = HookServer(port: bound, responder: responder)
        await box.set(server)
        await server.setTask(task)
        return server
    }

    /// A port that was free a moment ago, for a receiver that starts later.
    ///
    /// Handed out once per test process from below the kernel's ephemeral range (32768 and up), so
    /// neither another caller of this function nor a server binding port 0 can take it before the
    /// receiver starts: a live server that lost its port to another one answered for it (a sign-up
    /// reached the wrong server).
    public static func freePort() async throws -> Int {
        for _ in 0..<200 {
            let candidate = reservedPorts.withLock { next -> Int in
                next = next >= 32000 ? 20000 : next + 1
                return next
            }
            if let probe = try? await start(port: candidate) {
                await probe.stop()
                return candidate
            }
        }
        throw CancellationError()
    }

    private func setTask(_ task: Task<Void, any Error>) { self.task = task }

    func record(_ request: Received) -> Answer {
        received.append(request)
        return responder(request)
    }

    public func requests(to path: String) -> [Received] { received.filter { $0.path == path } }

    /// The requests received once there are at least `count`, or all of them when the wait gives up
    /// (``eventually(within:every:_:)``). A caller that gave up waiting (a hook's timeout) may answer
    /// before this server's handler has run, so a test waits for the request rather than counting at once.
    public func received(atLeast count: Int) async throws -> [Received] {
        try await eventually { received.count >= count ? received : nil } ?? received
    }

    func markAnswered() { answered += 1 }

    public func stop() async {
        task?.cancel()
        _ = try? await task?.value
    }
}

/// The test server could not listen on the port it was given.
public struct PortUnavailable: Error {
    public var port: Int
}

private actor HookServerBox {
    var server: HookServer?
    func set(_ server: HookServer) { self.server = server }
}

/// Writes a hooks file for a test server.
public func writeHooksFile(_ object: [String: Any]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString).json").path
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    return path
}

/// The last port ``HookServer/freePort()`` handed out; a start that differs per process keeps two test
/// processes on one machine apart too.
private let reservedPorts = Mutex(20000 + Int(ProcessInfo.processInfo.processIdentifier % 6000))
