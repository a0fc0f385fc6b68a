import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// The signed-in user's own account and sessions.
struct MeRoutes: Sendable {
    let sessionsFlow: SessionsFlow
    let accountFlow: AccountFlow
    let identities: IdentitiesFlow

    init(services: CoreServices) {
        self.sessionsFlow = SessionsFlow(services: services)
        self.accountFlow = AccountFlow(services: services)
        self.identities = IdentitiesFlow(services: services)
    }

    @Sendable func logout(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.optionalJSON(LogoutRequest.self, from: request, context: context)
        try await sessionsFlow.logout(context.principal, scope: body?.scope ?? .local, meta: context.meta)
        return Responses.noContent()
    }

    @Sendable func show(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        var user = context.principal.user.wire
        // Most users have none: the user's row says so, and only those with some pay for the read.
        user.identities = context.principal.user.hasIdentities ? try await identities.list(userID: context.principal.user.id) : []
        return try Responses.json(user, noStore: true)
    }

    @Sendable func update(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(ProfileUpdateRequest.self, from: request, context: context)
        return try Responses.json(try await accountFlow.updateProfile(context.principal, body.profile, meta: context.meta), noStore: true)
    }

    @Sendable func changePassword(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.json(PasswordChangeRequest.self, from: request, context: context)
        let meta = context.meta
        try await accountFlow.changePassword(context.principal, AccountFlow.PasswordChange(body), meta: meta)
        return Responses.noContent()
    }

    @Sendable func sessions(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await sessionsFlow.list(context.principal), noStore: true)
    }

    @Sendable func revokeSession(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw GatehouseError.notFound("No such session.")
        }
        try await sessionsFlow.revoke(context.principal, sessionID: id, meta: context.meta)
        return Responses.noContent()
    }
}
