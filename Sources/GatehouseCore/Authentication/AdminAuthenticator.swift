import Foundation

/// Recognises an admin credential: an access token from the `client_credentials` grant (no session)
/// whose scopes include an admin scope. A user's token is never one, whatever its scopes.
public struct AdminAuthenticator: Sendable {
    let tokens: AccessTokens

    public init(services: CoreServices) { self.tokens = services.tokens }

    /// nil when the token is a user's or carries no admin scope; throws when it is not valid at all.
    public func authenticate(_ token: String) async throws -> AdminPrincipal? {
        let claims = try await tokens.verify(token)
        guard claims.sid.isEmpty, claims.sub == claims.clientID else { return nil }
        let scopes = Set(claims.scope.split(separator: " ").map(String.init))
        guard !scopes.isDisjoint(with: AdminScope.every) else { return nil }
        return AdminPrincipal(clientID: claims.clientID, scopes: scopes)
    }
}
