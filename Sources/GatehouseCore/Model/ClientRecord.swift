import Foundation
import GatehouseAPI

/// An application that signs users in.
public struct ClientRecord: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Mobile apps and SPAs: cannot keep a secret, so PKCE is mandatory.
        case `public`
        /// Servers: authenticate with a secret.
        case confidential
    }

    public var id: String
    public var name: String
    public var kind: Kind
    /// SHA-256 (hex) of the client secret. The secret is 256 random bits, so a fast hash is enough.
    public var secretHash: String?
    public var redirectURIs: [String]
    public var scopes: [String]
    public var settings: ClientSettings
    public var isDefault: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, name: String, kind: Kind, secretHash: String? = nil, redirectURIs: [String] = [],
        scopes: [String] = ClientRecord.defaultScopes, settings: ClientSettings = ClientSettings(),
        isDefault: Bool = false, createdAt: Date, updatedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.scopes = scopes
        self.settings = settings
        self.isDefault = isDefault
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    public static let defaultScopes = ["openid", "profile", "email", "offline_access"]
}

/// Per-client settings, as `clients … --set KEY=VALUE` edits them.
public struct ClientSettings: Sendable, Hashable, Codable {
    public enum Toggle: String, Sendable, Hashable, Codable {
        case on, off
        public var isOn: Bool { self == .on }
    }

    /// Whether this client's tokens are bound to a DPoP key (RFC 9449). `allowed`: when the request
    /// that gets them carries a proof; `required`: every token request must; `off`: proofs are
    /// ignored and tokens are bearer tokens.
    public enum DPoPMode: String, Sendable, Hashable, Codable {
        case off, allowed, required
    }

    /// RFC 8693 token exchange: `on` lets a confidential client trade a user's access token for one
    /// for a downstream service; `impersonation` also lets it get a token acting as any user (`act`).
    public enum TokenExchangeMode: String, Sendable, Hashable, Codable {
        case off, on, impersonation
    }

    public enum EmailVerification: String, Sendable, Hashable, Codable {
        case required, off
    }

    /// What `sub` this client is shown (OIDC Core §8): the user id, or a value of its sector alone.
    public enum SubjectType: String, Sendable, Hashable, Codable {
        case `public`, pairwise
    }

    /// Second factors for this client's sign-ins: never asked (`off`), asked of users who enrolled one
    /// (`optional`, the default), or asked of everyone (`required`: a user without a factor enrols an
    /// authenticator app before the first session).
    public enum MFA: String, Sendable, Hashable, Codable {
        case off, optional, required
    }

    public var emailVerification: EmailVerification = .required
    public var enumerationProtection: Toggle = .on
    public var identifierStatus: Toggle = .off
    /// Whether a recovery request for an unknown address mails a neutral notice there.
    public var recoveryUnknownNotice: Toggle = .off
    public var methods: [String] = ["password"]
    public var requiredFields: [String] = []
    public var termsPlatformVersion: String?
    public var termsPlatformURL: String?
    public var termsClientVersion: String?
    public var termsClientURL: String?
    public var accessTokenTTL: Int = 900
    public var refreshTokenTTL: Int = 30 * 24 * 3600
    /// Whether users may register device authenticators (PIN, biometric, custom) with this client.
    public var deviceAuthenticators: Toggle = .on
    /// Wrong answers after which a device authenticator is deleted and its sessions revoked.
    public var maxFailureCount: Int = 3
    public var mfa: MFA = .optional
    /// Web origins (`https://app.example.com`) whose browser code may call the API (CORS).
    public var allowedOrigins: [String] = []
    /// Resource servers (absolute URIs) this client's access tokens are also for (`aud`, RFC 9068 §3);
    /// a token request may name one of them as `resource` (RFC 8707) to get a token for it alone.
    public var audiences: [String] = []
    /// A JSON Schema the user's own properties (`profile.metadata`) must satisfy (``MetadataSchema``).
    public var metadataSchema: JSONValue?
    /// The operator's social providers (by id) this client offers (`GET /v1/client`); a provider
    /// token for any other is refused.
    public var socialProviders: [String] = []
    /// A client the operator does not vouch for: the hosted sign-in asks the user's consent to the
    /// scopes it wants, once per user and client (revocable from `/v1/me/consents`).
    public var thirdParty: Toggle = .off
    /// Where RP-initiated logout may send the browser afterwards, matched exactly.
    public var postLogoutRedirectURIs: [String] = []
    /// Branding of the hosted pages: an https (or loopback http) logo, and a `#rrggbb` accent colour.
    public var logoURL: String?
    public var brandColor: String?
    /// How this client's ID tokens are signed (OIDC Dynamic Registration §2 `id_token_signed_response_alg`,
    /// whose default is RS256).
    public var idTokenSigningAlgorithm: SigningAlgorithm = .rs256
    /// How this client's access tokens are signed: ES256 unless its resource servers only know RS256.
    public var accessTokenSigningAlgorithm: SigningAlgorithm = .es256
    /// Whether userinfo answers this client with a signed JWT (`application/jwt`) rather than plain JSON.
    public var userinfoSigningAlgorithm: SigningAlgorithm?
    /// Where OpenID Connect Back-Channel Logout tokens are posted when one of this client's sessions
    /// ends (an https URL, or http to a loopback address).
    public var backchannelLogoutURI: String?
    /// Loaded in a hidden frame, with `iss` and `sid`, by the page that ends a browser session this
    /// client signed in with (OpenID Connect Front-Channel Logout 1.0).
    public var frontchannelLogoutURI: String?
    /// The client's public keys as a JWK Set (JSON): what its signed request objects verify with.
    public var jwks: String?
    /// Where the client publishes that JWK Set instead (fetched, cached for an hour, refetched for
    /// an unknown `kid`); `jwks` wins when both are set.
    public var jwksURI: String?
    /// The algorithm every request object of this client must be signed with; nil: any Gatehouse
    /// reads, unsigned included.
    public var requestObjectSigningAlgorithm: SigningAlgorithm?
    /// Authorization requests must be pushed first (RFC 9126 PAR): a request that is not is refused.
    public var requirePushedAuthorizationRequests: Toggle = .off
    public var subjectType: SubjectType = .public
    /// The host whose pairwise subjects this client shares (clients of one sector see the same
    /// `sub`); set from the redirect URIs when pairwise subjects are turned on without one.
    public var sectorIdentifier: String?
    public var dpop: DPoPMode = .allowed
    public var tokenExchange: TokenExchangeMode = .off
    /// The requests that must carry a bot challenge's token (`signup`, `signin`, `code_send`), checked
    /// with the server's challenge service (``BotChallenge``); empty: none.
    public var botChallenge: [String] = []
    /// Whether sign-up takes a username (``Username``): `off`, `optional` or `required`. Sign-in by
    /// username works on every client once an account has one.
    public var usernames: MFA = .off
    /// Whether apps may start anonymous accounts (``AnonymousSignIn``) that later upgrade.
    public var anonymous: Toggle = .off

    public init() {}

    private enum CodingKeys: String, CodingKey {
        case emailVerification = "email_verification"
        case enumerationProtection = "enumeration_protection"
        case identifierStatus = "identifier_status"
        case recoveryUnknownNotice = "recovery_unknown_notice"
        case methods
        case requiredFields = "required_fields"
        case termsPlatformVersion = "terms_platform_version"
        case termsPlatformURL = "terms_platform_url"
        case termsClientVersion = "terms_client_version"
        case termsClientURL = "terms_client_url"
        case accessTokenTTL = "access_token_ttl"
        case refreshTokenTTL = "refresh_token_ttl"
        case deviceAuthenticators = "device_authenticators"
        case maxFailureCount = "max_failure_count"
        case mfa
        case allowedOrigins = "allowed_origins"
        case audiences
        case metadataSchema = "metadata_schema"
        case socialProviders = "social_providers"
        case thirdParty = "third_party"
        case postLogoutRedirectURIs = "post_logout_redirect_uris"
        case logoURL = "logo_url"
        case brandColor = "brand_color"
        case idTokenSigningAlgorithm = "id_token_signed_response_alg"
        case accessTokenSigningAlgorithm = "access_token_signed_response_alg"
        case userinfoSigningAlgorithm = "userinfo_signed_response_alg"
        case backchannelLogoutURI = "backchannel_logout_uri"
        case frontchannelLogoutURI = "frontchannel_logout_uri"
        case jwks
        case jwksURI = "jwks_uri"
        case requestObjectSigningAlgorithm = "request_object_signing_alg"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case subjectType = "subject_type"
        case sectorIdentifier = "sector_identifier"
        case dpop
        case tokenExchange = "token_exchange"
        case botChallenge = "bot_challenge"
        case usernames
        case anonymous
    }

    // Tolerant decoding: a row written by an older version lacks newer keys.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ClientSettings.DefaultValues()
        emailVerification = try c.decodeIfPresent(EmailVerification.self, forKey: .emailVerification) ?? d.emailVerification
        enumerationProtection = try c.decodeIfPresent(Toggle.self, forKey: .enumerationProtection) ?? d.enumerationProtection
        identifierStatus = try c.decodeIfPresent(Toggle.self, forKey: .identifierStatus) ?? d.identifierStatus
        recoveryUnknownNotice = try c.decodeIfPresent(Toggle.self, forKey: .recoveryUnknownNotice) ?? .off
        methods = try c.decodeIfPresent([String].self, forKey: .methods) ?? d.methods
        requiredFields = try c.decodeIfPresent([String].self, forKey: .requiredFields) ?? d.requiredFields
        termsPlatformVersion = try c.decodeIfPresent(String.self, forKey: .termsPlatformVersion)
        termsPlatformURL = try c.decodeIfPresent(String.self, forKey: .termsPlatformURL)
        termsClientVersion = try c.decodeIfPresent(String.self, forKey: .termsClientVersion)
        termsClientURL = try c.decodeIfPresent(String.self, forKey: .termsClientURL)
        accessTokenTTL = try c.decodeIfPresent(Int.self, forKey: .accessTokenTTL) ?? d.accessTokenTTL
        refreshTokenTTL = try c.decodeIfPresent(Int.self, forKey: .refreshTokenTTL) ?? d.refreshTokenTTL
        deviceAuthenticators = try c.decodeIfPresent(Toggle.self, forKey: .deviceAuthenticators) ?? .on
        maxFailureCount = try c.decodeIfPresent(Int.self, forKey: .maxFailureCount) ?? 3
        mfa = try c.decodeIfPresent(MFA.self, forKey: .mfa) ?? .optional
        allowedOrigins = try c.decodeIfPresent([String].self, forKey: .allowedOrigins) ?? []
        audiences = try c.decodeIfPresent([String].self, forKey: .audiences) ?? []
        metadataSchema = try c.decodeIfPresent(JSONValue.self, forKey: .metadataSchema)
        socialProviders = try c.decodeIfPresent([String].self, forKey: .socialProviders) ?? []
        thirdParty = try c.decodeIfPresent(Toggle.self, forKey: .thirdParty) ?? .off
        postLogoutRedirectURIs = try c.decodeIfPresent([String].self, forKey: .postLogoutRedirectURIs) ?? []
        logoURL = try c.decodeIfPresent(String.self, forKey: .logoURL)
        brandColor = try c.decodeIfPresent(String.self, forKey: .brandColor)
        idTokenSigningAlgorithm = try c.decodeIfPresent(SigningAlgorithm.self, forKey: .idTokenSigningAlgorithm) ?? .rs256
        accessTokenSigningAlgorithm = try c.decodeIfPresent(SigningAlgorithm.self, forKey: .accessTokenSigningAlgorithm) ?? .es256
        userinfoSigningAlgorithm = try c.decodeIfPresent(SigningAlgorithm.self, forKey: .userinfoSigningAlgorithm)
        backchannelLogoutURI = try c.decodeIfPresent(String.self, forKey: .backchannelLogoutURI)
        frontchannelLogoutURI = try c.decodeIfPresent(String.self, forKey: .frontchannelLogoutURI)
        jwks = try c.decodeIfPresent(String.self, forKey: .jwks)
        jwksURI = try c.decodeIfPresent(String.self, forKey: .jwksURI)
        requestObjectSigningAlgorithm = try c.decodeIfPresent(SigningAlgorithm.self, forKey: .requestObjectSigningAlgorithm)
        requirePushedAuthorizationRequests = try c.decodeIfPresent(Toggle.self, forKey: .requirePushedAuthorizationRequests) ?? .off
        subjectType = try c.decodeIfPresent(SubjectType.self, forKey: .subjectType) ?? .public
        sectorIdentifier = try c.decodeIfPresent(String.self, forKey: .sectorIdentifier)
        dpop = try c.decodeIfPresent(DPoPMode.self, forKey: .dpop) ?? .allowed
        tokenExchange = try c.decodeIfPresent(TokenExchangeMode.self, forKey: .tokenExchange) ?? .off
        botChallenge = try c.decodeIfPresent([String].self, forKey: .botChallenge) ?? []
        usernames = try c.decodeIfPresent(MFA.self, forKey: .usernames) ?? .off
        anonymous = try c.decodeIfPresent(Toggle.self, forKey: .anonymous) ?? .off
    }

    private struct DefaultValues {
        let emailVerification = EmailVerification.required
        let enumerationProtection = Toggle.on
        let identifierStatus = Toggle.off
        let methods = ["password"]
        let requiredFields: [String] = []
        let accessTokenTTL = 900
        let refreshTokenTTL = 30 * 24 * 3600
    }
}
