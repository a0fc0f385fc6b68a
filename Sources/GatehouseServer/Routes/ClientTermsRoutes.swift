import GatehouseAPI
import GatehouseCore
import Hummingbird

/// What a client asks of its users (its terms, its required fields, its public information) and the
/// user's agreements and missing fields.
struct ClientTermsRoutes: Sendable {
    let terms: TermsFlow

    init(services: CoreServices) {
        self.terms = TermsFlow(services: services)
    }

    private func clientID(_ request: Request) throws -> String? {
        request.clientID(body: (try request.queryFields())["client_id"])
    }

    @Sendable func showTerms(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Responses.json(try await terms.terms(clientID: try clientID(request)))
    }

    @Sendable func requiredFields(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Responses.json(try await terms.requiredFields(clientID: try clientID(request)))
    }

    @Sendable func client(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Responses.json(try await terms.clientInfo(clientID: try clientID(request)))
    }

    @Sendable func agreements(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await terms.agreements(context.principal), noStore: true)
    }

    @Sendable func accept(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(
            Agreements.self, from: request, context: context, nullable: ["platform_version", "client_version", "up_to_date"])
        try await terms.accept(context.principal, body)
        return Responses.noContent()
    }

    @Sendable func missingFields(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await terms.missingFields(context.principal), noStore: true)
    }
}
