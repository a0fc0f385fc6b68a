import GatehouseCore
import Hummingbird

/// An operator's `client_credentials` token with an admin scope in `Authorization: Bearer` (or `DPoP`,
/// with its proof, when the token is bound).
struct AdminCredentialAuthenticator: RequestAuthenticator {
    let admin: AdminAuthenticator

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let presented = try request.presentedToken else { return nil }
        return try await admin.authenticate(presented).map(Identity.admin)
    }
}
