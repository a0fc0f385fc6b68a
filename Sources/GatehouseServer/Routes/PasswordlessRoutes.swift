import GatehouseAPI
import GatehouseCore
import Hummingbird

/// One-time codes, identifier status, terms, required fields and client information.
struct PasswordlessRoutes: Sendable {
    let otp: OTPFlow
    let terms: TermsFlow
    let status: IdentifierStatusFlow

    init(services: CoreServices) {
        self.otp = OTPFlow(services: services)
        self.terms = TermsFlow(services: services)
        self.status = IdentifierStatusFlow(services: services)
    }

    private func clientID(_ request: Request) throws -> String? {
        request.clientID(body: (try request.queryFields())["client_id"])
    }

    @Sendable func send(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(OTPRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await otp.send(OTPFlow.CodeRequest(body), meta: context.meta), status: .accepted)
    }

    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(OTPVerifyRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await otp.verify(OTPFlow.CodeSignIn(body), meta: context.meta), noStore: true)
    }

    @Sendable func identifierStatus(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = try request.queryFields()
        let answer = try await status.identifierStatus(
            email: query["email"], phone: query["phone"], clientID: request.clientID(body: query["client_id"]),
            meta: context.meta)
        return try Responses.json(answer, noStore: true)
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
