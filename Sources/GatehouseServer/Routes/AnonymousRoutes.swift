import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Anonymous accounts: the sign-in, and the signed-in account's upgrade.
struct AnonymousRoutes: Sendable {
    let flow: AnonymousAccountsFlow

    init(services: CoreServices) { self.flow = AnonymousAccountsFlow(services: services) }

    @Sendable func signIn(_ request: Request, context: AppRequestContext) async throws -> Response {
        // No body at all is fine: the client can come by its header alone.
        let body =
            request.headers[.contentType] == nil
            ? nil : try await RequestDecoding.json(AnonymousSignInRequest.self, from: request, context: context)
        let tokens = try await flow.signIn(clientID: request.clientID(body: body?.clientId), meta: context.meta)
        return try Responses.json(tokens, noStore: true)
    }

    @Sendable func upgrade(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(AccountUpgradeRequest.self, from: request, context: context)
        guard let password = body.password else {
            throw GatehouseError.validation(field: "password", code: .required, message: "Enter a password.")
        }
        let user = try await flow.upgrade(context.principal, email: body.email, password: password, meta: context.meta)
        return try Responses.json(user, noStore: true)
    }

    @Sendable func sendCode(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(AccountUpgradeRequest.self, from: request, context: context)
        return try Responses.json(try await flow.sendCode(context.principal, email: body.email, meta: context.meta), status: .accepted)
    }

    @Sendable func verifyCode(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(AccountUpgradeRequest.self, from: request, context: context)
        guard let code = body.code else { throw GatehouseError.validation(field: "code", code: .required, message: "Enter the code.") }
        let user = try await flow.verifyCode(context.principal, email: body.email, code: code, meta: context.meta)
        return try Responses.json(user, noStore: true)
    }
}
