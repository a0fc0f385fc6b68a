import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Device authenticators: registration, listing and deletion by the signed-in user; the challenge and
/// its signed answer for signing in with one.
struct AuthenticatorRoutes: Sendable {
    let authenticators: DeviceAuthenticatorsFlow
    let authentication: DeviceAuthenticationFlow

    init(services: CoreServices) {
        self.authenticators = DeviceAuthenticatorsFlow(services: services)
        self.authentication = DeviceAuthenticationFlow(services: services)
    }

    @Sendable func register(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(AuthenticatorRegistration.self, from: request, context: context)
        return try Responses.json(
            try await authenticators.register(context.principal, DeviceAuthenticatorsFlow.Enrolment(body), meta: context.meta),
            status: .created, noStore: true)
    }

    @Sendable func list(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await authenticators.list(context.principal), noStore: true)
    }

    @Sendable func delete(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.count <= 64 else {
            throw GatehouseError.notFound("No such authenticator.")
        }
        try await authenticators.delete(context.principal, id: id, meta: context.meta)
        return Responses.noContent()
    }

    @Sendable func challenge(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(DeviceChallengeRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(
            try await authentication.challenge(DeviceAuthenticationFlow.ChallengeRequest(body), meta: context.meta), noStore: true)
    }

    @Sendable func authenticate(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(DeviceAuthenticationRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(
            try await authentication.authenticate(DeviceAuthenticationFlow.Answer(body), meta: context.meta), noStore: true)
    }
}
