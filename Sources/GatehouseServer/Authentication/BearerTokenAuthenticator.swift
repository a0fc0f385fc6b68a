import GatehouseCore
import Hummingbird

/// A user's access token in `Authorization: Bearer`.
struct BearerTokenAuthenticator: RequestAuthenticator {
    let bearer: BearerAuthenticator

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let token = request.bearerToken else { return nil }
        return try await bearer.authenticate(token).map(Identity.user)
    }
}
