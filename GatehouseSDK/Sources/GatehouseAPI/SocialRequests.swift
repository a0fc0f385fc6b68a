import Foundation

/// `POST /v1/social/{provider}/token`: the ID token a provider's native SDK gave the app (Sign in with
/// Apple, Google Sign-In, any OpenID Connect provider), with the raw nonce it was requested with.
public struct SocialTokenRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var idToken: String
    /// The raw nonce; the token carries it or (Apple) its SHA-256 in hex.
    public var nonce: String
    /// The name the provider's SDK gave on the first sign-in (Apple sends it once, outside the token).
    public var givenName: String?
    public var familyName: String?

    public init(clientId: String? = nil, idToken: String, nonce: String, givenName: String? = nil, familyName: String? = nil) {
        self.clientId = clientId
        self.idToken = idToken
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
    }

    private enum CodingKeys: String, CodingKey {
        case nonce
        case clientId = "client_id", idToken = "id_token", givenName = "given_name", familyName = "family_name"
    }
}
