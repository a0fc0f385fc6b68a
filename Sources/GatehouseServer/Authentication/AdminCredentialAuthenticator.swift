import GatehouseCore
import Hummingbird

/// An operator's `client_credentials` token with an admin scope in `Authorization: Bearer`.
struct AdminCredentialAuthenticator: RequestAuthenticator {
    let admin: AdminAuthenticator

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let token = request.bearerToken else { return nil }
        return try await admin.authenticate(token).map(Identity.admin)
    }
}
