import Foundation
import Gatehouse
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers from a script instead of the network, and records what was sent.
actor ScriptedServer: HTTPTransport {
    struct Reply: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: Data
        /// How long the answer takes, so concurrent callers pile up behind it.
        var delayMilliseconds: UInt64 = 0
        /// Fail as the network would, instead of answering.
        var networkDown = false

        static func json(_ status: Int, _ value: some Encodable, headers: [String: String] = [:]) -> Reply {
            Reply(
                status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                body: try! WireCoding.encoder().encode(value))
        }

        static func problem(_ status: Int, _ code: ErrorCode, errors: [FieldError]? = nil, headers: [String: String] = [:]) -> Reply {
            var reply = json(
                status, Problem(status: status, code: code, title: "Title", detail: "Detail of \(code)", errors: errors), headers: headers)
            reply.headers["Content-Type"] = "application/problem+json"
            return reply
        }

        static let noContent = Reply(status: 204, body: Data())
        static let offline = Reply(status: 0, body: Data(), networkDown: true)
    }

    struct Call: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: Data

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var form: [String: String] {
            var fields: [String: String] = [:]
            for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                fields[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return fields
        }
    }

    /// Replies per "METHOD /path", used in order; the last one repeats.
    private var script: [String: [Reply]] = [:]
    private(set) var calls: [Call] = []

    func on(_ route: String, _ replies: Reply...) { script[route] = replies }

    func calls(to route: String) -> [Call] { calls.filter { "\($0.method) \($0.path)" == route } }

    nonisolated func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let reply = await record(request)
        if reply.delayMilliseconds > 0 { try await Task.sleep(nanoseconds: reply.delayMilliseconds * 1_000_000) }
        if reply.networkDown { throw URLError(.notConnectedToInternet) }
        let response = HTTPURLResponse(url: request.url!, statusCode: reply.status, httpVersion: "HTTP/1.1", headerFields: reply.headers)!
        return (reply.body, response)
    }

    private func record(_ request: URLRequest) -> Reply {
        let call = Call(
            method: request.httpMethod ?? "GET", path: request.url?.path ?? "", headers: request.allHTTPHeaderFields ?? [:],
            body: request.httpBody ?? Data())
        calls.append(call)
        let route = "\(call.method) \(call.path)"
        guard var replies = script[route], !replies.isEmpty else {
            return .problem(404, .notFound)
        }
        let reply = replies.removeFirst()
        if replies.isEmpty { replies = [reply] }
        script[route] = replies
        return reply
    }
}

/// A clock that moves only when told to.
///
/// `@unchecked Sendable` is sound: `current` is read and written only while `lock` is held.
final class ManualClock: AuthClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(by seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}

enum Fixture {
    static let baseURL = URL(string: "https://id.example.test")!
    static let user = User(
        id: UUID(uuidString: "7d5c3c8e-2a57-4f5e-9d0c-1b1a0e6f3a11")!, email: "ada@example.com", emailVerified: true, phone: nil,
        phoneVerified: false, hasPassword: true, profile: Profile(givenName: "Ada"), state: .active,
        createdAt: Date(timeIntervalSince1970: 1_700_000_000), lastLoginAt: nil)

    static func tokens(
        _ n: Int, expiresIn: Int = 900, scope: String? = "email openid", idToken: String? = nil, user: User? = Fixture.user,
        isNew: Bool? = nil
    ) -> ScriptedServer.Reply {
        .json(
            200,
            TokenResponse(
                accessToken: "access-\(n)", expiresIn: expiresIn, refreshToken: "refresh-\(n)", scope: scope, idToken: idToken,
                user: user, isNew: isNew))
    }

    static func client(
        _ server: ScriptedServer, clock: ManualClock = ManualClock(), store: any SessionStore = InMemorySessionStore()
    )
        -> AuthClient
    {
        AuthClient(configuration: .init(baseURL: baseURL, clientID: "app", store: store, transport: server, clock: clock))
    }
}

/// Collects events from a stream until told to stop.
actor EventRecorder {
    private(set) var events: [AuthEvent] = []
    private var task: Task<Void, Never>?

    static func following(_ client: AuthClient) async -> EventRecorder {
        let recorder = EventRecorder()
        let stream = await client.events()
        await recorder.start(stream)
        return recorder
    }

    private func start(_ stream: AsyncStream<AuthEvent>) {
        task = Task { for await event in stream { self.append(event) } }
    }

    private func append(_ event: AuthEvent) { events.append(event) }

    /// The events once `count` have arrived (or what arrived within two seconds).
    func first(_ count: Int) async -> [AuthEvent] {
        for _ in 0..<200 where events.count < count { try? await Task.sleep(nanoseconds: 10_000_000) }
        return events
    }
}
