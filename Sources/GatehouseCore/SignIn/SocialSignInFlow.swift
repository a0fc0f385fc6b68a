import Foundation
import GatehouseAPI

/// Sign-in with a token a social provider's native SDK handed the app: an ID token (Sign in with
/// Apple, Google, Facebook Limited Login, LinkedIn, any OpenID Connect provider) or an access token
/// (Facebook Login, GitHub, a provider with introspection) proved to be the operator's app's. The
/// account rules are ``SocialAccounts``'.
public struct SocialSignInFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public struct Request: Sendable {
        public var providerID: String
        public var idToken: String?
        public var accessToken: String?
        /// The raw nonce the app generated for an ID token; the token carries it or its SHA-256.
        public var nonce: String?
        public var clientID: String?
        /// The name the app got from the provider's SDK on the first sign-in (Apple sends it once, not
        /// in the token).
        public var givenName: String?
        public var familyName: String?
        /// Accepts the client's current terms with this sign-in.
        public var acceptTerms: Bool
        public var meta: RequestMeta

        public init(
            providerID: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil, clientID: String?,
            givenName: String? = nil, familyName: String? = nil, acceptTerms: Bool = false, meta: RequestMeta
        ) {
            self.acceptTerms = acceptTerms
            self.providerID = providerID
            self.idToken = idToken
            self.accessToken = accessToken
            self.nonce = nonce
            self.clientID = clientID
            self.givenName = givenName
            self.familyName = familyName
            self.meta = meta
        }
    }

    public func signIn(_ request: Request) async throws -> TokenResponse {
        let client = try await services.clients.resolve(request.clientID)
        let provider = try SocialAccounts.provider(request.providerID, for: client, services: services)
        let signedIn = try await SocialAccounts(services: services).signIn(
            provider: provider, client: client, givenName: request.givenName, familyName: request.familyName,
            acceptTerms: request.acceptTerms, meta: request.meta,
            target: .app(.init(scopes: SessionIssuer.grant(requested: nil, client: client)))
        ) { try await verify(request, provider: provider, client: client) }
        let started = try signedIn.started.app()
        return try await services.issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: signedIn.user, isNew: signedIn.isNew)
    }

    /// The request's token checked as its kind requires; shared with linking from `/v1/me`.
    func verify(_ request: Request, provider: SocialProvider, client: ClientRecord) async throws -> FederatedClaims {
        try Self.validate(request, provider: provider)
        let meta = request.meta
        let now = services.clock.now()
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)
        let accounts = SocialAccounts(services: services)
        return try await accounts.checking(provider: provider, client: client, meta: meta) {
            if let idToken = request.idToken, let nonce = request.nonce {
                guard let verifier = services.social.verifier else { throw IDTokenError.providerMisconfigured }
                let claims = try await verifier.verify(idToken, provider: provider, nonce: nonce, now: now)
                // A nonce is good once: a token captured on its way to us cannot be played again.
                let key = "social-nonce:" + Secrets.sha256Hex(provider.id + "\u{0}" + nonce)
                let uses = try await services.persistence.transaction { stores in
                    try await stores.attempts.recordFailure(key: key, now: now, window: 24 * 3600)
                }
                if uses.count > 1 { throw IDTokenError.replayed }
                return claims
            }
            guard let http = services.social.http else { throw IDTokenError.providerMisconfigured }
            var userinfo = provider.endpoints.userinfo
            if userinfo == nil, provider.kind == .oidc || provider.kind == .linkedin, let cache = services.social.verifier?.cache {
                userinfo = try await cache.discovery(provider).userinfo_endpoint
            }
            return try await ProviderAPI(http: http).verifyAccessToken(request.accessToken ?? "", provider: provider, userinfoURL: userinfo)
        }
    }

    /// The shape of the request, before anything is counted or asked of the provider.
    static func validate(_ request: Request, provider: SocialProvider) throws {
        var result = ValidationResult()
        switch (request.idToken, request.accessToken) {
        case (.some, .some), (.none, .none):
            result.invalidate(field: "id_token", code: .required, message: "Send either the provider's id_token or its access_token.")
        case (.some, .none):
            if (request.nonce ?? "").isEmpty || (request.nonce?.count ?? 0) > 256 {
                result.invalidate(field: "nonce", code: .required, message: "Send the raw nonce the provider's token was requested with.")
            }
            if !provider.issuesIDTokens {
                result.invalidate(
                    field: "id_token", code: .invalidFormat, message: "This provider issues no ID tokens: send its access_token.")
            }
        case (.none, .some):
            if !provider.acceptsNativeAccessTokens {
                result.invalidate(
                    field: "access_token", code: .invalidFormat,
                    message: provider.kind == .x || !provider.issuesIDTokens
                        ? "This provider's access tokens cannot be proved to be this app's: use the web sign-in (/v1/social/\(provider.id)/start)."
                        : "Send this provider's id_token (with its nonce).")
            }
        }
        for (field, value) in [("given_name", request.givenName), ("family_name", request.familyName)] where (value?.count ?? 0) > 200 {
            result.invalidate(field: field, code: .tooLong, message: "Use at most 200 characters.")
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
    }
}
