import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Social sign-in: a native SDK's token (`/token`), and the browser's round trip through the provider
/// (`/start`, `/callback`). HTTP in and out; the rules are in ``SocialSignInFlow`` and ``SocialWebFlow``.
struct SocialRoutes: Sendable {
    let flow: SocialSignInFlow
    let web: SocialWebFlow
    let pages: HostedPages
    let secureCookies: Bool
    let sessionLifetime: Int

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.flow = SocialSignInFlow(services: services)
        self.web = SocialWebFlow(services: services)
        self.pages = HostedPages(catalog: catalog)
        self.secureCookies = services.settings.secureCookies
        self.sessionLifetime = Int(services.settings.browserSessionLifetime)
    }

    @Sendable func token(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SocialTokenRequest.self, from: request, context: context)
        let provider = try Self.provider(context)
        let tokens = try await flow.signIn(
            SocialSignInFlow.Request(
                providerID: provider, idToken: body.idToken, accessToken: body.accessToken, nonce: body.nonce,
                clientID: request.clientID(body: body.clientId), givenName: body.givenName, familyName: body.familyName,
                acceptTerms: body.acceptTerms == true, meta: context.meta))
        return try Responses.json(tokens, status: tokens.isNew == true ? .created : .ok, noStore: true)
    }

    /// `GET /v1/social/{provider}/start`: to the provider, with a cookie binding the flow to this browser.
    @Sendable func start(_ request: Request, context: AppRequestContext) async throws -> Response {
        let provider = try Self.provider(context)
        let query = try request.queryFields()
        func value(_ name: String) -> String? { query[name] }
        let started = try await web.start(
            providerID: provider, clientID: value("client_id"), redirectTo: value("redirect_to"), codeChallenge: value("code_challenge"),
            challengeMethod: value("code_challenge_method"), state: value("state"), acceptTerms: value("accept_terms") == "true",
            meta: context.meta)
        var response = PageResponses.redirect(to: started.providerURL)
        response.status = .found
        response.headers[.setCookie] =
            Self.cookie(provider: provider, flowID: started.flowID, value: started.browserToken, secure: secureCookies).headerValue
        return response
    }

    /// `GET /v1/social/{provider}/callback`: the provider's answer; back to the app with a code or an error.
    @Sendable func callback(_ request: Request, context: AppRequestContext) async throws -> Response {
        let provider = try Self.provider(context)
        let query = try request.queryFields()
        func value(_ name: String) -> String? { query[name] }
        let state = value("state")
        let cookie = state.flatMap(UUID.init(uuidString:)).map {
            Self.cookie(provider: provider, flowID: $0, value: "", secure: secureCookies)
        }
        let cookies = Cookies(request)
        // A sign-in started on the hosted page goes on with this browser's authorize flow and session.
        let binding = cookies[FlowBindingCookie.name]
        let browser = binding == nil ? nil : context.browser
        let answer = try await web.callback(
            providerID: provider,
            SocialWebFlow.Callback(
                state: state, code: value("code"), error: value("error"), browserToken: cookie.flatMap { cookies[$0.name] },
                appleUser: value("user"), meta: context.meta, hostedBinding: binding, browser: browser?.session))
        var response: Response
        switch answer {
        case .redirect(let url):
            response = PageResponses.redirect(to: url)
            response.status = .found
        case .hosted(let outcome, let session):
            response = try pages.answer(
                outcome, request: request, browserCookie: session, sessionLifetime: sessionLifetime, secure: secureCookies)
        }
        if let cookie { response.headers.append(HTTPField(name: .setCookie, value: cookie.expired().headerValue)) }
        return response
    }

    /// Sign in with Apple posts its answer cross-site (`form_post`), and a SameSite=Lax cookie does not
    /// come with a cross-site POST: the code and state go on to the GET callback, a top-level navigation
    /// that carries it; Apple's `user` (the name) waits in the flow.
    @Sendable func formPostCallback(_ request: Request, context: AppRequestContext) async throws -> Response {
        let provider = try Self.provider(context)
        let fields = try await RequestDecoding.formFields(from: request)
        try await web.rememberFormPost(providerID: provider, state: fields["state"], appleUser: fields["user"])
        var components = URLComponents()
        components.path = "/v1/social/\(provider)/callback"
        components.queryItems = ["code", "state", "error"].compactMap { name in fields[name].map { URLQueryItem(name: name, value: $0) } }
        guard let url = components.url else { throw GatehouseError.badRequest("Invalid callback.") }
        return PageResponses.redirect(to: url)
    }

    static func provider(_ context: some RequestContext) throws -> String {
        guard let provider = context.parameters.get("provider"), SocialProvider.isValidID(provider) else {
            throw GatehouseError.providerNotEnabled
        }
        return provider
    }

    /// One cookie per flow (two tabs may sign in at once), only sent to that provider's callback.
    static func cookie(provider: String, flowID: UUID, value: String, secure: Bool) -> SetCookie {
        SetCookie(
            name: "gh_social_" + flowID.uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16), value: value,
            path: "/v1/social/\(provider)/callback", maxAge: Int(SocialWebFlow.lifetime), sameSite: .lax, secure: secure)
    }
}
