import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// The HTTP client of hooks and webhooks: redirects are refused (a hook that answers 3xx has failed;
/// following it could lead a request carrying user data anywhere) and connecting is bounded.
enum HookHTTPClient {
    /// Lives as long as the process, like `HTTPClient.shared`: a static is never deinitialized, so it
    /// never needs the shutdown a deinitialized client would demand.
    static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(3))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest answer read from a hook.
    static let maxResponseBytes = 64 * 1024

    /// Sends `request` and reads at most ``maxResponseBytes`` of the answer, all within `timeout`.
    /// A webhook's answer is only its status (`keepBody: false`): the body is read and dropped.
    static func send(
        _ request: HTTPClientRequest, timeout: Duration, keepBody: Bool = true, maxBytes: Int = maxResponseBytes
    ) async throws -> (status: Int, body: ByteBuffer) {
        try await withThrowingTaskGroup(of: (Int, ByteBuffer).self) { group in
            group.addTask {
                let response = try await shared.execute(request, timeout: TimeAmount(timeout))
                guard keepBody else {
                    for try await _ in response.body {}
                    return (Int(response.status.code), ByteBuffer())
                }
                let body: ByteBuffer
                do {
                    body = try await response.body.collect(upTo: maxBytes)
                } catch is NIOTooManyBytesError {
                    throw HookCallError.badAnswer("over \(maxBytes / 1024) KiB")
                }
                return (Int(response.status.code), body)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw HookCallError.timedOut
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

enum HookCallError: Error, CustomStringConvertible {
    case timedOut
    case status(Int)
    case badAnswer(String)

    var description: String {
        switch self {
        case .timedOut: "timed out"
        case .status(let status): "answered \(status)"
        case .badAnswer(let reason): "answered badly: \(reason)"
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
