import Foundation

extension SocialProvider {
    /// The operator's settings for one provider, as the providers file gives them; a preset fills
    /// in the rest.
    public struct Settings: Sendable {
        public var clientIDs: [String]
        public var webClientID: String?
        public var clientSecret: String?
        public var appleKey: AppleSigningKey?
        /// Replaces the preset's issuer; without ``jwksURI`` the keys are then discovered from it.
        public var issuer: String?
        public var jwksURI: String?
        public var endpoints = Endpoints()
        public var scopes: [String]?
        public var pkce: Bool?
        public var claimMap = ClaimMap()
        public var keepTokens = false
        public var keepProfile = false

        public init(clientIDs: [String]) { self.clientIDs = clientIDs }
    }

    /// Each provider's published endpoints; every one can be overridden (tests point them at local
    /// servers).
    public static func preset(_ kind: Kind, id: String, settings s: Settings) -> SocialProvider {
        var issuers: [String]
        var jwks: String?
        var endpoints: Endpoints
        var scopes: [String]
        var pkce = true
        switch kind {
        case .apple:
            issuers = ["https://appleid.apple.com"]
            jwks = "https://appleid.apple.com/auth/keys"
            endpoints = Endpoints(authorization: "https://appleid.apple.com/auth/authorize", token: "https://appleid.apple.com/auth/token")
            scopes = ["name", "email"]
            pkce = false
        case .google:
            issuers = ["https://accounts.google.com", "accounts.google.com"]
            jwks = "https://www.googleapis.com/oauth2/v3/certs"
            endpoints = Endpoints(
                authorization: "https://accounts.google.com/o/oauth2/v2/auth", token: "https://oauth2.googleapis.com/token",
                userinfo: "https://openidconnect.googleapis.com/v1/userinfo")
            scopes = ["openid", "email", "profile"]
        case .facebook:
            // ID tokens come from Facebook Limited Login; access tokens from classic Facebook Login.
            issuers = ["https://www.facebook.com"]
            jwks = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"
            endpoints = Endpoints(
                authorization: "https://www.facebook.com/v19.0/dialog/oauth", token: "https://graph.facebook.com/v19.0/oauth/access_token",
                api: "https://graph.facebook.com/v19.0")
            scopes = ["email", "public_profile"]
        case .github:
            issuers = []
            endpoints = Endpoints(
                authorization: "https://github.com/login/oauth/authorize", token: "https://github.com/login/oauth/access_token",
                api: "https://api.github.com")
            scopes = ["read:user", "user:email"]
        case .linkedin:
            issuers = ["https://www.linkedin.com/oauth"]
            jwks = "https://www.linkedin.com/oauth/openid/jwks"
            endpoints = Endpoints(
                authorization: "https://www.linkedin.com/oauth/v2/authorization", token: "https://www.linkedin.com/oauth/v2/accessToken",
                userinfo: "https://api.linkedin.com/v2/userinfo", introspection: "https://www.linkedin.com/oauth/v2/introspectToken")
            scopes = ["openid", "profile", "email"]
            pkce = false
        case .x:
            issuers = []
            endpoints = Endpoints(
                authorization: "https://x.com/i/oauth2/authorize", token: "https://api.x.com/2/oauth2/token", api: "https://api.x.com")
            scopes = ["users.read", "tweet.read"]
        case .oidc:
            issuers = []
            endpoints = Endpoints()
            scopes = ["openid", "email", "profile"]
        case .oauth2:
            issuers = []
            endpoints = Endpoints()
            scopes = []
        }
        if let issuer = s.issuer {
            issuers = [issuer]
            jwks = nil
        }
        return SocialProvider(
            id: id, kind: kind, issuers: issuers, jwksURI: s.jwksURI ?? jwks, clientIDs: s.clientIDs, webClientID: s.webClientID,
            clientSecret: s.clientSecret, appleKey: s.appleKey, endpoints: endpoints.overridden(by: s.endpoints),
            scopes: s.scopes ?? scopes,
            pkce: s.pkce ?? pkce, formPost: kind == .apple, claimMap: s.claimMap, keepTokens: s.keepTokens, keepProfile: s.keepProfile)
    }
}
