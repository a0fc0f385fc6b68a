import Crypto
import Foundation
import GatehouseAPI
import Logging

/// Social sign-in through the browser (a web app, or a native app's `ASWebAuthenticationSession`):
///
/// 1. `start`: the app's client id, a `redirect_to` registered for it and its PKCE challenge become a
///    persisted flow; the browser gets a cookie that binds the flow to it and goes to the provider
///    with Gatehouse's own `state`, nonce and PKCE challenge.
/// 2. `callback`: the provider's answer must name an open flow, come in the browser that started it,
///    and is used once. Gatehouse exchanges the provider's code with the operator's secret, reads who
///    the person is, applies ``SocialAccounts``' rules, and sends the browser back to `redirect_to`
///    with a one-time Gatehouse authorization code (and the app's `state`), which the app exchanges
///    at `/oauth/token` with its PKCE verifier: the deep-link pattern of the verification mail.
public struct SocialWebFlow: Sendable {
    let services: CoreServices
    public static let lifetime: TimeInterval = 600

    public init(services: CoreServices) { self.services = services }

    struct FlowData: Codable {
        var provider: String
        /// The app asked to accept the client's current terms with this sign-in.
        var acceptTerms: Bool?
        /// Sign in with Apple's first-sign-in name, from its `form_post` (kept here, not in a URL).
        var givenName: String?
        var familyName: String?
        /// Started from a hosted sign-in page: the authorize flow to go on with (no app code).
        var hostedFlow: UUID?
    }

    /// Apple's answer arrives as a cross-site POST, without the flow's SameSite=Lax cookie. Its name
    /// (personal data) is kept in the flow, so the hop to the GET callback carries only the code and
    /// the state. An unknown state changes nothing: the callback refuses it.
    public func rememberFormPost(providerID: String, state: String?, appleUser: String?) async throws {
        guard let appleUser, let id = state.flatMap(UUID.init(uuidString:)) else { return }
        let runner = FlowRunner(services: services)
        let flow: FlowRecord
        do {
            flow = try await runner.find(id, kind: .social)
        } catch let error as GatehouseError where error.code == .flowExpired {
            return
        }
        guard flow.step == .started,
            var data = flow.data.flatMap({ try? JSONDecoder().decode(FlowData.self, from: Data($0.utf8)) }), data.provider == providerID
        else { return }
        let name = Self.appleName(appleUser)
        data.givenName = name.given
        data.familyName = name.family
        do {
            _ = try await runner.advance(
                flow, to: Self.providerAnswered, data: String(decoding: try JSONEncoder().encode(data), as: UTF8.self))
        } catch let error as GatehouseError where error.code == .flowExpired {
            // Posted twice: the first post's name stands.
        }
    }

    static let providerAnswered = FlowStep(rawValue: "provider_answered")

    public struct Started: Sendable {
        /// Where to send the browser.
        public var providerURL: URL
        /// The browser-binding value for the flow's cookie; only its hash is stored.
        public var browserToken: String
        public var flowID: UUID
    }

    public func start(
        providerID: String, clientID: String?, redirectTo: String?, codeChallenge: String?, challengeMethod: String?, state: String?,
        acceptTerms: Bool = false, meta: RequestMeta
    ) async throws -> Started {
        let client = try await services.clients.resolve(clientID)
        let provider = try SocialAccounts.provider(providerID, for: client, services: services)
        var result = ValidationResult()
        if redirectTo.map({ !client.redirectURIs.contains($0) }) ?? true {
            // Exact match only (RFC 9700 §4.1.3): a prefix or pattern would be an open redirect.
            result.invalidate(field: "redirect_to", code: .invalidValue, message: "Use a redirect URI registered for this client.")
        }
        var pkce: PKCEChallenge?
        if let codeChallenge {
            pkce = PKCEChallenge(challenge: codeChallenge, method: challengeMethod ?? "S256")
            if pkce == nil {
                result.invalidate(field: "code_challenge", code: .invalidFormat, message: "Send a 43–128 character S256 challenge.")
            }
        } else if client.kind == .public {
            result.invalidate(field: "code_challenge", code: .required, message: "Public clients must send a PKCE S256 challenge.")
        }
        if let state, state.utf8.count > 512 {
            result.invalidate(field: "state", code: .tooLong, message: "Use at most 512 bytes.")
        }
        guard result.isValid, let redirectTo else { throw GatehouseError.validation(result) }
        return try await begin(
            provider: provider, client: client, redirectTo: redirectTo, pkce: pkce, state: state,
            data: FlowData(provider: provider.id, acceptTerms: acceptTerms ? true : nil), meta: meta)
    }

    /// A provider button on the hosted sign-in page: the same round trip, back into the authorize flow
    /// `authorizeFlowID` (whose browser binding the caller checked) instead of to an app.
    public func startHosted(providerID: String, authorizeFlowID: UUID, clientID: String, meta: RequestMeta) async throws -> Started {
        let client = try await services.clients.resolve(clientID)
        let provider = try SocialAccounts.provider(providerID, for: client, services: services)
        return try await begin(
            provider: provider, client: client, redirectTo: "/authorize/" + authorizeFlowID.uuidString.lowercased(), pkce: nil, state: nil,
            data: FlowData(provider: provider.id, hostedFlow: authorizeFlowID), meta: meta)
    }

    private func begin(
        provider: SocialProvider, client: ClientRecord, redirectTo: String, pkce: PKCEChallenge?, state: String?, data: FlowData,
        meta: RequestMeta
    ) async throws -> Started {
        let now = services.clock.now()
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)
        let endpoints = try await endpoints(provider, client: client, meta: meta)
        guard let authorization = endpoints.authorization, endpoints.token != nil else { throw GatehouseError.providerUnavailable }

        let browserToken = Secrets.token(prefix: "")
        let nonce = Base64URL.encode(Secrets.randomBytes(32))
        let flow = try await FlowRunner(services: services).begin(
            .social, client: client, redirectURI: redirectTo, pkce: pkce, nonce: nonce, state: state,
            data: String(decoding: try JSONEncoder().encode(data), as: UTF8.self), binding: browserToken, lifetime: Self.lifetime,
            meta: meta
        ).flow

        guard var components = URLComponents(string: authorization) else { throw GatehouseError.providerUnavailable }
        var query = components.queryItems ?? []
        query += [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: provider.webClientID),
            URLQueryItem(name: "redirect_uri", value: callbackURL(provider)),
            URLQueryItem(name: "state", value: flow.id.uuidString.lowercased()),
        ]
        if !provider.scopes.isEmpty { query.append(URLQueryItem(name: "scope", value: provider.scopes.joined(separator: " "))) }
        if provider.issuesIDTokens { query.append(URLQueryItem(name: "nonce", value: nonce)) }
        if provider.pkce {
            let challenge = Base64URL.encode(SHA256.hash(data: Data(providerVerifier(flow.id).utf8)))
            query += [URLQueryItem(name: "code_challenge", value: challenge), URLQueryItem(name: "code_challenge_method", value: "S256")]
        }
        if provider.formPost { query.append(URLQueryItem(name: "response_mode", value: "form_post")) }
        // Google gives a refresh token only when asked for offline access.
        if provider.keepTokens, provider.kind == .google { query.append(URLQueryItem(name: "access_type", value: "offline")) }
        components.percentEncodedQuery = query.map { FormEncoding.escape($0.name) + "=" + FormEncoding.escape($0.value ?? "") }
            .joined(separator: "&")
        guard let url = components.url else { throw GatehouseError.providerUnavailable }
        return Started(providerURL: url, browserToken: browserToken, flowID: flow.id)
    }

    /// What the provider sent back to the callback.
    public struct Callback: Sendable {
        public var state: String?
        public var code: String?
        public var error: String?
        /// The browser-binding cookie's value.
        public var browserToken: String?
        /// Sign in with Apple's `user` field (first sign-in only): `{"name": {"firstName", "lastName"}}`.
        public var appleUser: String?
        public var meta: RequestMeta
        /// For a sign-in started on the hosted page: the browser's flow cookie and its session, if any.
        public var hostedBinding: String?
        public var browser: BrowserSessionRecord?

        public init(
            state: String?, code: String?, error: String?, browserToken: String?, appleUser: String?, meta: RequestMeta,
            hostedBinding: String? = nil, browser: BrowserSessionRecord? = nil
        ) {
            self.state = state
            self.code = code
            self.error = error
            self.browserToken = browserToken
            self.appleUser = appleUser
            self.meta = meta
            self.hostedBinding = hostedBinding
            self.browser = browser
        }
    }

    /// Where the callback leads.
    public enum Answer: Sendable {
        /// Back to the app (a code or an error), or to the hosted page (an error to show there).
        case redirect(URL)
        /// The hosted sign-in went on: its next page or the client's answer, and the browser's new
        /// session cookie when one began.
        case hosted(AuthorizeFlow.Outcome, cookie: String?)
    }

    /// Where the browser goes next: the app's `redirect_to` with `code` and `state`, or with `error`
    /// and `state` when the sign-in failed after the flow was proved to be this browser's. A callback
    /// that names no open flow of this browser throws (a page, never a redirect: nothing proves whose
    /// redirect it would be).
    public func callback(providerID: String, _ callback: Callback) async throws -> Answer {
        guard let state = callback.state, let flowID = UUID(uuidString: state) else { throw GatehouseError.flowExpired }
        let runner = FlowRunner(services: services)
        // Bound to the browser that started it: a code injected into another browser (login CSRF)
        // finds no cookie there.
        guard let token = callback.browserToken else {
            // A flow nobody has is gone for everyone; one that exists is not this browser's.
            _ = try await runner.find(flowID, kind: .social)
            throw GatehouseError.csrfMismatch
        }
        let flow = try await runner.load(flowID, kind: .social, binding: token)
        guard let redirect = flow.redirectURI,
            let data = flow.data.flatMap({ try? JSONDecoder().decode(FlowData.self, from: Data($0.utf8)) }), data.provider == providerID
        else { throw GatehouseError.flowExpired }
        _ = try await runner.complete(flowID, meta: callback.meta)
        if let hosted = data.hostedFlow {
            return try await hostedCallback(hosted, flow: flow, providerID: providerID, data: data, callback)
        }
        func back(_ items: [(String, String)]) throws -> URL {
            try AuthorizationCodes.append(items + (flow.state.map { [("state", $0)] } ?? []), to: redirect)
        }
        let client = try await services.clients.resolve(flow.clientID)
        do {
            if let error = callback.error {
                services.logger.info(
                    "provider refused the sign-in", metadata: ["provider": "\(providerID)", "error": "\(error.prefix(64))"])
                return .redirect(try back([("error", ErrorCode.accessDenied.rawValue)]))
            }
            let provider = try SocialAccounts.provider(providerID, for: client, services: services)
            let name = names(data, callback)
            let grant = try await SocialAccounts(services: services).signIn(
                provider: provider, client: client, givenName: name.given, familyName: name.family, meta: callback.meta,
                target: .authorizationCode(.init(redirectURI: redirect, pkce: flow.pkce, acceptTerms: data.acceptTerms == true))
            ) { try await providerClaims(flow: flow, code: callback.code, provider: provider, client: client, meta: callback.meta) }
            .started.code()
            return .redirect(try back([("code", grant)]))
        } catch let error as GatehouseError where error.category != .internalFailure {
            // A sign-in waiting for a second factor: the app completes it by the flow's id.
            let pending = error.pendingFlow.map { [("flow_id", $0.id.uuidString.lowercased())] } ?? []
            return .redirect(try back([("error", error.code.rawValue)] + pending))
        }
    }

    /// The hosted page's provider sign-in: the browser signs in and the authorize flow goes on; a
    /// failure goes back to the sign-in page, which says so.
    private func hostedCallback(
        _ authorizeFlow: UUID, flow: FlowRecord, providerID: String, data: FlowData, _ callback: Callback
    ) async throws
        -> Answer
    {
        let page = "/authorize/" + authorizeFlow.uuidString.lowercased()
        guard let binding = callback.hostedBinding else { throw GatehouseError.csrfMismatch }
        // Before anyone is signed in: a flow gone by now must not cost the browser its session.
        try await AuthorizeFlow(services: services).requireSignInPage(authorizeFlow, binding: binding)
        let client = try await services.clients.resolve(flow.clientID)
        do {
            if callback.error != nil {
                return .redirect(try AuthorizationCodes.append([("error", ErrorCode.accessDenied.rawValue)], to: page))
            }
            let provider = try SocialAccounts.provider(providerID, for: client, services: services)
            let name = names(data, callback)
            let signedIn: SignedIn
            do {
                signedIn = try await SocialAccounts(services: services).signIn(
                    provider: provider, client: client, givenName: name.given, familyName: name.family, meta: callback.meta,
                    target: .browser(.init(current: callback.browser, authorizeFlowID: authorizeFlow))
                ) { try await providerClaims(flow: flow, code: callback.code, provider: provider, client: client, meta: callback.meta) }
            } catch let error as GatehouseError where error.code == .mfaRequired {
                guard let pending = error.pendingFlow else { throw error }
                return .hosted(
                    try await AuthorizeFlow(services: services).federatedAwaitsFactor(authorizeFlow, binding: binding, pending: pending),
                    cookie: nil)
            }
            let browser = try signedIn.started.browser()
            let outcome = try await AuthorizeFlow(services: services).federated(
                authorizeFlow, binding: binding, session: browser.session, user: signedIn.user, isNew: signedIn.isNew)
            return .hosted(outcome, cookie: browser.cookie)
        } catch let error as GatehouseError
            where error.category != .internalFailure && error.code != .flowExpired && error.code != .csrfFailed
        {
            return .redirect(try AuthorizationCodes.append([("error", error.code.rawValue)], to: page))
        }
    }

    private func names(_ data: FlowData, _ callback: Callback) -> (given: String?, family: String?) {
        data.givenName != nil || data.familyName != nil ? (data.givenName, data.familyName) : Self.appleName(callback.appleUser)
    }

    /// Exchanges the provider's code and reads who the person is (the ID token, or the profile).
    private func providerClaims(
        flow: FlowRecord, code: String?, provider: SocialProvider, client: ClientRecord, meta: RequestMeta
    )
        async throws -> FederatedClaims
    {
        guard let code, !code.isEmpty, code.utf8.count <= 2048 else {
            throw GatehouseError.badRequest("The provider sent no code.")
        }
        let accounts = SocialAccounts(services: services)
        let endpoints = try await endpoints(provider, client: client, meta: meta)
        let now = services.clock.now()
        let claims = try await accounts.checking(provider: provider, client: client, meta: meta) { () async throws -> FederatedClaims in
            guard let http = services.social.http, let tokenURL = endpoints.token else { throw IDTokenError.providerMisconfigured }
            let api = ProviderAPI(http: http)
            let tokens = try await api.exchange(
                code: code, redirectURI: callbackURL(provider), verifier: provider.pkce ? providerVerifier(flow.id) : nil,
                provider: provider,
                tokenURL: tokenURL, now: now)
            var claims: FederatedClaims
            // Facebook's web flow answers an access token (its ID tokens come from Limited Login).
            if provider.issuesIDTokens, provider.kind != .facebook {
                guard let idToken = tokens.idToken, let verifier = services.social.verifier, let nonce = flow.nonce else {
                    throw IDTokenError.malformed
                }
                claims = try await verifier.verify(idToken, provider: provider, nonce: nonce, now: now)
            } else {
                guard let access = tokens.accessToken else { throw IDTokenError.malformed }
                claims = try await api.profile(accessToken: access, provider: provider, userinfoURL: endpoints.userinfo)
            }
            if provider.keepTokens { claims.grant = ProviderGrant(tokens, now: now) }
            return claims
        }
        return claims
    }

    /// Gatehouse's own PKCE verifier towards the provider, derived from the flow id under the server
    /// secret: nothing to store, nothing an observer of the flow id can compute.
    func providerVerifier(_ flowID: UUID) -> String {
        services.secret.csrfToken(for: "social-pkce:" + flowID.uuidString.lowercased())
    }

    func callbackURL(_ provider: SocialProvider) -> String {
        services.settings.publicURL.trimmingSuffix("/") + "/v1/social/" + provider.id + "/callback"
    }

    private func endpoints(_ provider: SocialProvider, client: ClientRecord, meta: RequestMeta) async throws -> SocialProvider.Endpoints {
        guard let cache = services.social.verifier?.cache else { return provider.endpoints }
        return try await SocialAccounts(services: services).checking(provider: provider, client: client, meta: meta) {
            try await cache.endpoints(provider)
        }
    }

    static func appleName(_ user: String?) -> (given: String?, family: String?) {
        guard let user, user.utf8.count <= 2048,
            let object = try? JSONSerialization.jsonObject(with: Data(user.utf8)) as? [String: Any],
            let name = object["name"] as? [String: Any]
        else { return (nil, nil) }
        func clip(_ value: Any?) -> String? { (value as? String).flatMap { $0.isEmpty ? nil : String($0.prefix(200)) } }
        return (clip(name["firstName"]), clip(name["lastName"]))
    }
}
