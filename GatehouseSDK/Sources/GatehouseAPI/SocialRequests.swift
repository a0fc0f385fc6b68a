import Foundation

/// `POST /v1/social/{provider}/token`: what a provider's native SDK gave the app. Either an ID token
/// with the raw nonce it was requested with (Sign in with Apple, Google, Facebook Limited Login,
/// LinkedIn, any OpenID Connect provider), or an access token the server can prove was issued to the
/// operator's app (Facebook Login, GitHub, a provider with introspection).
public struct SocialTokenRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var idToken: String?
    public var accessToken: String?
    /// The raw nonce of an ID token; the token carries it or (Apple) its SHA-256 in hex.
    public var nonce: String?
    /// The name the provider's SDK gave on the first sign-in (Apple sends it once, outside the token).
    public var givenName: String?
    public var familyName: String?
    /// Accepts the client's current terms with this sign-in (as `accept_terms` at sign-up).
    public var acceptTerms: Bool?

    public init(clientId: String? = nil, idToken: String, nonce: String, givenName: String? = nil, familyName: String? = nil) {
        self.clientId = clientId
        self.idToken = idToken
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
    }

    public init(clientId: String? = nil, accessToken: String) {
        self.clientId = clientId
        self.accessToken = accessToken
    }

    private enum CodingKeys: String, CodingKey {
        case nonce
        case clientId = "client_id", idToken = "id_token", accessToken = "access_token", givenName = "given_name", familyName =
            "family_name"
        case acceptTerms = "accept_terms"
    }
}

/// `POST /v1/me/identities`: links a provider account to the signed-in user, proved by the same
/// token a sign-in would send.
public struct IdentityLinkRequest: Codable, Hashable, Sendable {
    public var provider: String
    public var idToken: String?
    public var accessToken: String?
    public var nonce: String?

    public init(provider: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil) {
        self.provider = provider
        self.idToken = idToken
        self.accessToken = accessToken
        self.nonce = nonce
    }

    private enum CodingKeys: String, CodingKey {
        case provider, nonce
        case idToken = "id_token", accessToken = "access_token"
    }
}

/// A provider account linked to a user.
public struct LinkedIdentity: Codable, Hashable, Sendable {
    /// The link's id, for `DELETE /v1/me/identities/{id}`.
    public var id: String
    public var provider: String
    /// The provider's stable id for the person.
    public var subject: String
    /// The address the provider gave when the identity was linked.
    public var email: String?
    public var linkedAt: Date
    /// What the provider last returned about the person (its ID token's claims or its profile API's
    /// answer), when the operator keeps it for this provider.
    public var profile: [String: JSONValue]?

    public init(id: String, provider: String, subject: String, email: String?, linkedAt: Date, profile: [String: JSONValue]? = nil) {
        self.id = id
        self.provider = provider
        self.subject = subject
        self.email = email
        self.linkedAt = linkedAt
        self.profile = profile
    }

    private enum CodingKeys: String, CodingKey {
        case id, provider, subject, email, profile
        case linkedAt = "linked_at"
    }
}

/// `GET /v1/me/identities`.
public struct IdentityList: Codable, Hashable, Sendable {
    public var identities: [LinkedIdentity]
    public init(identities: [LinkedIdentity]) { self.identities = identities }
}
