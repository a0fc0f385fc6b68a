import GatehouseCore
import Hummingbird

/// A user's access token in `Authorization: Bearer`, or `Authorization: DPoP` with its proof.
struct BearerTokenAuthenticator: RequestAuthenticator {
    let bearer: BearerAuthenticator

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let presented = try request.presentedToken else { return nil }
        return try await bearer.authenticate(presented).map(Identity.user)
    }
}
