import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// The signed-in user's linked provider identities.
struct IdentityRoutes: Sendable {
    let flow: IdentitiesFlow
    let tokens: ProviderTokensFlow

    init(services: CoreServices) {
        self.flow = IdentitiesFlow(services: services)
        self.tokens = ProviderTokensFlow(services: services)
    }

    @Sendable func list(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(IdentityList(identities: try await flow.list(context.principal)), noStore: true)
    }

    @Sendable func link(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(IdentityLinkRequest.self, from: request, context: context)
        let (identity, created) = try await flow.link(context.principal, IdentitiesFlow.Link(body), meta: context.meta)
        return try Responses.json(identity, status: created ? .created : .ok, noStore: true)
    }

    @Sendable func unlink(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.count <= 64 else { throw GatehouseError.notFound("No such identity.") }
        try await flow.unlink(context.principal, id: id, meta: context.meta)
        return Responses.noContent()
    }

    /// The provider's access token for the identity: `no-store`, as any token answer.
    @Sendable func providerToken(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        guard let id = context.parameters.get("id"), !id.isEmpty else { throw GatehouseError.notFound("No such identity.") }
        return try Responses.json(try await tokens.accessToken(context.principal, identityID: id, meta: context.meta), noStore: true)
    }
}
