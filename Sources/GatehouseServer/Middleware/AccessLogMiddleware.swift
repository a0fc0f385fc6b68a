import Hummingbird
import Logging
import NIOCore

/// One log line per request: method, path without the query (links carry tokens there), status,
/// duration. Never headers or bodies.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        context.logger.debug(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)",
            ])
        return response
    }
}
