import HTTPTypes
import Hummingbird

/// Parsed once: a generic type cannot hold a static stored property.
private let requestIDField = HTTPField.Name("Request-Id")!

/// The headers every answer carries, successful or rendered from an error: `nosniff` and the request
/// id that the log lines carry too. Outside every group's ``ErrorMiddleware``, so it runs once.
struct CommonHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[values: requestIDField] = [context.id]
        return response
    }
}
