import GatehouseAPI
import GatehouseCore
import Hummingbird

/// The identifier status an app asks before choosing a method: whether an address has an account, is
/// verified, has a password (as the client's enumeration policy allows).
struct IdentifierRoutes: Sendable {
    let status: IdentifierStatusFlow

    init(services: CoreServices) { self.status = IdentifierStatusFlow(services: services) }

    @Sendable func identifierStatus(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = try request.queryFields()
        let answer = try await status.identifierStatus(
            email: query["email"], phone: query["phone"], username: query["username"], clientID: request.clientID(body: query["client_id"]),
            meta: context.meta)
        return try Responses.json(answer, noStore: true)
    }
}
