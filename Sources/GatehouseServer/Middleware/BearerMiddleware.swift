import GatehouseCore
import Hummingbird

/// Checks `Authorization: Bearer …` and records the principal; the routes behind it run in an
/// ``AuthenticatedContext``, whose init refuses a request without one.
struct BearerMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let authenticator: BearerAuthenticator

    func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw GatehouseError.unauthorized("A bearer token is required.", code: .unauthorized)
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw GatehouseError.unauthorized("Use the Bearer scheme.", code: .unauthorized)
        }
        var context = context
        context.principal = try await authenticator.authenticate(String(parts[1]).trimmingCharacters(in: .whitespaces))
        return try await next(request, context)
    }
}
