import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Tracing

/// The HTTP client of hooks and webhooks: redirects are refused (a hook that answers 3xx has failed;
/// following it could lead a request carrying user data anywhere) and connecting is bounded.
enum HookHTTPClient {
    /// Lives as long as the process, like `HTTPClient.shared`: a static is never deinitialized, so it
    /// never needs the shutdown a deinitialized client would demand.
    static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(3))
        // `send` opens the span itself (with the host, never the query a provider call may carry a
        // token in, which the client's own span would record).
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest answer read from a hook.
    static let maxResponseBytes = 64 * 1024

    /// Sends `request` and reads at most ``maxResponseBytes`` of the answer, all within `timeout`.
    /// A webhook's answer is only its status (`keepBody: false`): the body is read and dropped.
    ///
    /// The timeout answers the caller at once, without waiting for the cancelled request to wind down: a
    /// task group would await its child, and a request cancelled while its connection waits for an answer
    /// can take until the hook answers to finish (a sign-up held 9 s by a hook with a 300 ms timeout).
    ///
    /// Each call is a client span named `operation` (`hook before_sign_in`, `webhook user.created`,
    /// `provider www.googleapis.com`), and the receiver gets its `traceparent`. The span records the
    /// host, never the path or query (a provider's query may hold a token).
    static func send(
        _ request: HTTPClientRequest, operation: String, timeout: Duration, keepBody: Bool = true, maxBytes: Int = maxResponseBytes
    ) async throws -> (status: Int, body: ByteBuffer) {
        try await withSpan(operation, ofKind: .client) { span in
            var request = request
            span.attributes["http.request.method"] = request.method.rawValue
            span.attributes["server.address"] = URLComponents(string: request.url)?.host
            // The call's own span, so the receiver's work hangs from it (not from the request's).
            InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: HTTPClientHeadersInjector())
            let answer = try await sendUntraced(request, timeout: timeout, keepBody: keepBody, maxBytes: maxBytes)
            span.attributes["http.response.status_code"] = answer.status
            return answer
        }
    }

    private static func sendUntraced(
        _ request: HTTPClientRequest, timeout: Duration, keepBody: Bool, maxBytes: Int
    ) async throws -> (status: Int, body: ByteBuffer) {
        let outcome = FirstOutcome<(status: Int, body: ByteBuffer)>()
        let work = Task {
            do {
                outcome.resolve(.success(try await perform(request, timeout: timeout, keepBody: keepBody, maxBytes: maxBytes)))
            } catch {
                outcome.resolve(.failure(error))
            }
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            outcome.resolve(.failure(HookCallError.timedOut))
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            outcome.resolve(.failure(CancellationError()))
        }
    }

    private static func perform(
        _ request: HTTPClientRequest, timeout: Duration, keepBody: Bool, maxBytes: Int
    ) async throws -> (status: Int, body: ByteBuffer) {
        let response = try await shared.execute(request, timeout: TimeAmount(timeout))
        guard keepBody else {
            for try await _ in response.body {}
            return (Int(response.status.code), ByteBuffer())
        }
        do {
            return (Int(response.status.code), try await response.body.collect(upTo: maxBytes))
        } catch is NIOTooManyBytesError {
            throw HookCallError.badAnswer("over \(maxBytes / 1024) KiB")
        }
    }
}

/// The first of several outcomes (an answer, a timeout, a cancellation), handed to the one waiter; the
/// rest are dropped. Written here because the standard library's task groups await every child.
final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Mutex(State())

    func resolve(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
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
