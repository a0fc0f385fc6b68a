import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Passkeys: the usernameless sign-in's challenge and answer, and the signed-in user's registration,
/// list, rename and removal.
struct PasskeyRoutes: Sendable {
    let passkeys: PasskeysFlow
    let signIn: PasskeySignInFlow

    init(services: CoreServices) {
        self.passkeys = PasskeysFlow(services: services)
        self.signIn = PasskeySignInFlow(services: services)
    }

    @Sendable func authenticationOptions(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(PasskeyOptionsRequest.self, from: request, context: context)
        return try Responses.json(
            try await signIn.options(clientID: request.clientID(body: body.clientId), meta: context.meta), noStore: true)
    }

    @Sendable func authenticate(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(PasskeyAuthenticationRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await signIn.authenticate(body, meta: context.meta), noStore: true)
    }

    @Sendable func registrationOptions(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await passkeys.registrationOptions(context.principal, meta: context.meta), noStore: true)
    }

    @Sendable func register(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(PasskeyRegistrationRequest.self, from: request, context: context)
        return try Responses.json(
            try await passkeys.register(context.principal, request: body, meta: context.meta), status: .created, noStore: true)
    }

    @Sendable func list(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await passkeys.list(context.principal), noStore: true)
    }

    @Sendable func rename(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(PasskeyUpdate.self, from: request, context: context)
        return try Responses.json(
            try await passkeys.rename(context.principal, id: try Self.id(context), name: body.name, meta: context.meta), noStore: true)
    }

    @Sendable func remove(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try await passkeys.remove(context.principal, id: try Self.id(context), meta: context.meta)
        return Responses.noContent()
    }

    private static func id(_ context: AuthenticatedContext) throws -> String {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.count <= 64 else { throw GatehouseError.notFound("No such passkey.") }
        return id
    }
}
