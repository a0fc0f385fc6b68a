import GatehouseCore
import Hummingbird

/// Where tokens are issued (`/oauth/token` and the `/v1` sign-in routes), a `DPoP` proof is checked
/// against the request before the handler runs, and its key goes with the request's metadata to the
/// flow, which binds what it issues as the client's `dpop` setting says. A request without the header
/// costs nothing.
struct DPoPProofMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let verifier: DPoPVerifier

    func handle(
        _ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response
    ) async throws -> Response {
        let proofs = request.headers[values: DPoPHeaders.proof]
        guard !proofs.isEmpty else { return try await next(request, context) }
        guard proofs.count == 1 else { throw GatehouseError.invalidDPoPProof("A request carries one DPoP proof.") }
        var context = context
        context.meta.dpopKey = try await verifier.verify(proofs[0], method: request.method.rawValue, path: request.uri.path)
        return try await next(request, context)
    }
}
