import Foundation

/// `GET /v1/me/identities/{id}/token`: the provider's access token for a linked identity, for the app
/// to call the provider's API as the person (refreshed at the provider by Gatehouse when it expired;
/// the refresh token stays on the server).
public struct ProviderAccessToken: Codable, Hashable, Sendable {
    /// The identity's id (as in `GET /v1/me/identities`).
    public var identityID: String
    public var provider: String
    public var accessToken: String
    /// As the provider named it (`Bearer` unless it said otherwise).
    public var tokenType: String
    /// When the provider said the token expires; nil when it did not say.
    public var expiresAt: Date?
    /// The scope the provider granted, as it wrote it.
    public var scope: String?

    public init(identityID: String, provider: String, accessToken: String, tokenType: String, expiresAt: Date?, scope: String?) {
        self.identityID = identityID
        self.provider = provider
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey {
        case provider, scope
        case identityID = "identity_id", accessToken = "access_token", tokenType = "token_type", expiresAt = "expires_at"
    }
}

extension ProviderAccessToken: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the token itself: an app's log line must not hand it on.
    public var description: String {
        "ProviderAccessToken(\(provider), identity: \(identityID), expires: \(expiresAt.map { "\($0)" } ?? "unstated"))"
    }
    public var debugDescription: String { description }
}
