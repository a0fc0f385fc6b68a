import Foundation

/// A social identity provider the operator configured (`GATEHOUSE_SOCIAL_FILE`): whose tokens are
/// accepted, for which of the operator's app ids at that provider, checked against which keys or
/// APIs, and how the web redirect flow reaches it.
public struct SocialProvider: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case apple, google, facebook, github, linkedin, x, oidc, oauth2
    }

    /// The name apps and clients use (`apple`, `google`, `acme-sso`).
    public var id: String
    public var kind: Kind
    /// `iss` values accepted in ID tokens (Google signs with two spellings of one issuer); empty for
    /// providers that issue none.
    public var issuers: [String]
    /// Where the provider publishes its keys; nil: discovered from the issuer's
    /// `/.well-known/openid-configuration`.
    public var jwksURI: String?
    /// The operator's app ids at the provider (`aud` of ID tokens, the app a Facebook or introspected
    /// token must belong to): iOS, Android and web ids of one app may differ.
    public var clientIDs: [String]
    /// The id the web flow and server-to-provider calls use (GitHub's token check, Facebook's app
    /// token, introspection); the first of ``clientIDs`` unless configured.
    public var webClientID: String
    /// The operator's secret at the provider: the web flow's code exchange and the checks that prove
    /// an access token was issued to this app. Never logged.
    public var clientSecret: String?
    /// Sign in with Apple's client secret is a short-lived ES256 JWT made from the team's key.
    public var appleKey: AppleSigningKey?
    public var endpoints: Endpoints
    /// Scopes asked for in the web flow.
    public var scopes: [String]
    /// Whether the provider takes a PKCE challenge from Gatehouse in the web flow.
    public var pkce: Bool
    /// Apple answers with a cross-site POST to the callback (`response_mode=form_post`).
    public var formPost: Bool
    /// A generic OAuth 2.0 provider's profile (userinfo) fields, by the name Gatehouse uses.
    public var claimMap: ClaimMap
    /// Keep the provider's access and refresh tokens from the web flow (sealed under the server
    /// secret) and hand the access token to the app over its session: off unless the operator opts in,
    /// as a kept token is one more secret to lose.
    public var keepTokens: Bool
    /// Keep the profile the provider returned (ID token claims or its profile API's answer) as the
    /// identity's data; off unless the operator opts in (personal data not asked for is not kept).
    public var keepProfile: Bool

    public struct Endpoints: Sendable, Hashable {
        public var authorization: String?
        public var token: String?
        public var userinfo: String?
        /// RFC 7662 (or LinkedIn's like it): proves a native app's access token is this app's.
        public var introspection: String?
        /// Facebook's Graph API, GitHub's and X's REST API.
        public var api: String?

        public init(
            authorization: String? = nil, token: String? = nil, userinfo: String? = nil, introspection: String? = nil, api: String? = nil
        ) {
            self.authorization = authorization
            self.token = token
            self.userinfo = userinfo
            self.introspection = introspection
            self.api = api
        }

        /// `override`'s endpoints where set, these elsewhere.
        func overridden(by override: Endpoints) -> Endpoints {
            Endpoints(
                authorization: override.authorization ?? authorization, token: override.token ?? token,
                userinfo: override.userinfo ?? userinfo, introspection: override.introspection ?? introspection, api: override.api ?? api)
        }
    }

    /// Which userinfo field holds what (dotted paths into nested objects allowed: `data.id`).
    public struct ClaimMap: Sendable, Hashable {
        public var subject = "sub"
        public var email = "email"
        public var emailVerified = "email_verified"
        public var name = "name"
        public var givenName = "given_name"
        public var familyName = "family_name"
        public init() {}
    }

    public struct AppleSigningKey: Sendable, Hashable {
        public var teamID: String
        public var keyID: String
        /// The `.p8` file's PEM text (a P-256 private key).
        public var privateKeyPEM: String
        public init(teamID: String, keyID: String, privateKeyPEM: String) {
            self.teamID = teamID
            self.keyID = keyID
            self.privateKeyPEM = privateKeyPEM
        }
    }

    public init(
        id: String, kind: Kind, issuers: [String], jwksURI: String?, clientIDs: [String], webClientID: String? = nil,
        clientSecret: String? = nil, appleKey: AppleSigningKey? = nil, endpoints: Endpoints = Endpoints(), scopes: [String] = [],
        pkce: Bool = true, formPost: Bool = false, claimMap: ClaimMap = ClaimMap(), keepTokens: Bool = false, keepProfile: Bool = false
    ) {
        self.id = id
        self.kind = kind
        self.issuers = issuers
        self.jwksURI = jwksURI
        self.clientIDs = clientIDs
        self.webClientID = webClientID ?? clientIDs.first ?? ""
        self.clientSecret = clientSecret
        self.appleKey = appleKey
        self.endpoints = endpoints
        self.scopes = scopes
        self.pkce = pkce
        self.formPost = formPost
        self.claimMap = claimMap
        self.keepTokens = keepTokens
        self.keepProfile = keepProfile
    }

    /// Whether the provider's tokens are OpenID Connect ID tokens (checked against its keys) rather
    /// than access tokens read through its API.
    public var issuesIDTokens: Bool { !issuers.isEmpty }

    /// Whether a native app's access token can be proved to be this app's: Facebook's `debug_token`,
    /// GitHub's token check, or an introspection endpoint. X has none, so its tokens are taken only
    /// from the web flow, where Gatehouse gets them itself.
    public var acceptsNativeAccessTokens: Bool {
        switch kind {
        case .facebook, .github: clientSecret != nil
        case .x, .apple, .google: false
        case .linkedin, .oidc, .oauth2: endpoints.introspection != nil && clientSecret != nil
        }
    }

    public static func isValidID(_ id: String) -> Bool {
        (1...40).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }
}

extension SocialProvider: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the secret or the Apple key: a provider may end up in a log line or an error.
    public var description: String {
        "SocialProvider(\(id), \(kind.rawValue), clients: \(clientIDs), secret: \(clientSecret == nil ? "none" : "set"), apple key: \(appleKey == nil ? "none" : "set"))"
    }
    public var debugDescription: String { description }
}

extension SocialProvider.AppleSigningKey: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "AppleSigningKey(team: \(teamID), key: \(keyID))" }
    public var debugDescription: String { description }
}
