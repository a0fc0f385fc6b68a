import Foundation
import GatehouseAPI

/// Recognises an admin credential: an access token from the `client_credentials` grant (no session)
/// whose scopes include an admin scope. A user's token is never one, whatever its scopes.
public struct AdminAuthenticator: Sendable {
    let tokens: AccessTokens
    let clients: ClientResolver
    let dpop: DPoPVerifier

    public init(services: CoreServices) {
        self.tokens = services.tokens
        self.clients = services.clients
        self.dpop = services.dpop
    }

    /// nil when the token is a user's or carries no admin scope; throws when it is not valid at all,
    /// or when its client has since been deleted or lost every admin scope the token carries (the
    /// client is looked up, through the one-second client cache, so a deletion on any node or from
    /// the CLI takes effect at once rather than when the token expires).
    public func authenticate(_ presented: PresentedToken) async throws -> AdminPrincipal? {
        let claims = try await tokens.verify(presented.token)
        guard claims.sid.isEmpty, claims.sub == claims.clientID else { return nil }
        try await dpop.check(claims, presented: presented)
        let asked = Set(claims.scope.split(separator: " ").map(String.init))
        guard !asked.isDisjoint(with: AdminScope.every) else { return nil }
        let client: ClientRecord
        do {
            client = try await clients.resolve(claims.clientID)
        } catch let error as GatehouseError where error.code == .invalidClient {
            throw GatehouseError.unauthorized("The client this token was issued to no longer exists.")
        }
        let scopes = asked.intersection(client.scopes)
        guard !scopes.isDisjoint(with: AdminScope.every) else {
            throw GatehouseError.unauthorized("The client this token was issued to no longer holds its admin scopes.")
        }
        return AdminPrincipal(clientID: claims.clientID, scopes: scopes)
    }
}
