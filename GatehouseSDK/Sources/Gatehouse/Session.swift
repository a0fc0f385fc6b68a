import Foundation

/// The signed-in session as an app may see it: the access token for your own HTTP clients and
/// WebSockets, when it expires, who is signed in, the granted scopes and the OpenID Connect ID token.
///
/// The refresh token is not part of it: only the SDK presents it, so it never leaks into app code or
/// logs. ``AuthClient/session`` is a snapshot that may be about to expire; ask
/// ``AuthClient/accessToken()`` for a token that is fresh.
public struct Session: Sendable, Hashable {
    public var accessToken: String
    public var accessTokenExpiresAt: Date
    public var user: User
    /// The scopes the server granted.
    public var scopes: Set<Scope>
    /// The ID token (a JWT) when the sign-in asked for ``Scope/openid``; its `nonce` claim is the nonce
    /// the sign-in sent.
    public var idToken: String?

    public init(accessToken: String, accessTokenExpiresAt: Date, user: User, scopes: Set<Scope> = [], idToken: String? = nil) {
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.user = user
        self.scopes = scopes
        self.idToken = idToken
    }

    init(_ stored: StoredSession) {
        self.init(
            accessToken: stored.accessToken, accessTokenExpiresAt: stored.accessTokenExpiresAt, user: stored.user,
            scopes: Set(wireValue: stored.scope), idToken: stored.idToken)
    }
}
