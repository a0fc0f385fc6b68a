import Foundation
import GatehouseAPI

extension AuthClient {
    /// The social provider's access token for one of the signed-in user's identities, to call that
    /// provider's API as the person (a GitHub repository list, a Google calendar).
    ///
    /// Gatehouse keeps the provider's tokens only when the operator opted in for that provider
    /// (`keep_tokens`), from a sign-in through the browser (``socialSignInURL(provider:)`` and the hosted
    /// page); it refreshes an expired token at the provider itself and never hands out the refresh
    /// token. Throws `provider_token_unavailable` when there is none to give (sign in with the
    /// provider again), `not_found` for an identity that is not the user's (or was unlinked), and
    /// `temporarily_unavailable` when the provider cannot refresh right now.
    ///
    /// - Parameter identityID: ``LinkedIdentity/id`` from ``identities()``.
    public func providerToken(forIdentity identityID: String) async throws -> ProviderAccessToken {
        try await authorized(http.request("GET", "/v1/me/identities/" + Self.pathSegment(identityID) + "/token"))
    }
}
