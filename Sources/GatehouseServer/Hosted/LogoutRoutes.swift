import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): ends the browser session and every
/// app session it signed in, then returns to the client only at a `post_logout_redirect_uri` it
/// registered, exactly.
struct LogoutRoutes: Sendable {
    let tokens: AccessTokens
    let clients: ClientResolver
    let sessions: BrowserSessions
    let pages: HostedPages
    let secret: ServerSecret
    let secureCookies: Bool

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.tokens = services.tokens
        self.clients = services.clients
        self.sessions = services.browserSessions
        self.pages = HostedPages(catalog: catalog)
        self.secret = services.secret
        self.secureCookies = services.settings.secureCookies
    }

    /// What the request asks, checked: the client (from the hint or `client_id`) and where to go after.
    struct Checked {
        var client: ClientRecord?
        var hint: IDTokenClaims?
        var redirect: String?
        var state: String?
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        let parameters: [String: String] =
            request.method == .post
            ? try await RequestDecoding.formFields(from: request)
            : try FormBody.fields(Array((request.uri.query ?? "").utf8))
        if request.method == .post, parameters["confirm"] == nil {
            // A relying party's cross-site POST brings no SameSite=Lax session cookie: the same request
            // as a top-level GET does, so the session it asks to end is found.
            let query = FormEncoding.encode(parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return PageResponses.redirect(to: URL(string: "/oauth/logout?" + query)!)
        }
        let lang = pages.language(uiLocales: parameters["ui_locales"], request: request)
        let checked: Checked
        do {
            checked = try await check(parameters)
        } catch let refused as Refused {
            return pages.error(lang: lang, headingKey: refused.heading, detailKey: refused.detail, status: .badRequest)
        }
        let cookie = Cookies(request)[BrowserSessionCookie.name]
        let browser = context.browser
        var frames: [URL] = []
        if let browser, let cookie {
            // The hint names this browser's user: the client asks for its own user's logout. Anything
            // else (no hint, another user's) asks the user first, so a link cannot sign anyone out.
            // The hint must be of a session this browser signed in, not merely of the same user.
            let confirmed =
                if let hint = checked.hint, let client = checked.client,
                    hint.sub == tokens.subjects.subject(of: browser.user.id, for: client)
                {
                    try await sessions.signedIn(appSessionID: hint.sid, by: browser.session.id)
                } else { false }
            let posted = request.method == .post && parameters["confirm"] == "yes"
            if posted {
                guard let binding = Cookies(request)[AuthorizeRoutes.bindingCookie], let sent = parameters["csrf"],
                    secret.csrfMatches(sent, for: "logout:\(binding)")
                else {
                    return pages.error(lang: lang, headingKey: "error_title", detailKey: "error_expired_form", status: .forbidden)
                }
            } else if !confirmed {
                return confirmation(parameters, checked: checked, lang: lang, request: request)
            }
            if let ended = try await sessions.end(cookieValue: cookie) {
                frames = await FrontChannelLogout.frames(for: ended.signedIn, clients: clients, issuer: tokens.issuer)
            }
        }
        // Cleared only when the browser sent one: a request without it ended nothing.
        let cleared = cookie == nil ? [] : [BrowserSessionCookie.make(value: "", maxAge: 0, secure: secureCookies).headerValue]
        let next = try checked.redirect.map { try AuthorizationCodes.append(checked.state.map { [("state", $0)] } ?? [], to: $0) }
        if let next, frames.isEmpty {
            var response = PageResponses.redirect(to: next)
            for value in cleared { response.headers.append(HTTPField(name: .setCookie, value: value)) }
            return response
        }
        // Clients to tell in the browser: the page frames them, and only once they have loaded
        // (the window's load event waits for its frames) moves on to the client's redirect.
        var values: [String: Any] = ["frames": frames.map { ["src": $0.absoluteString] }]
        if let next { values["continue_url"] = next.absoluteString }
        return pages.page(
            "logged_out", lang: lang, client: checked.client, titleKey: "logged_out_title", values: values, cookies: cleared,
            frames: frames.map(\.absoluteString), script: next == nil ? nil : HostedPages.continueScriptHash)
    }

    private func confirmation(_ parameters: [String: String], checked: Checked, lang: String, request: Request) -> Response {
        let (binding, setCookie) = FlowBindingCookie.binding(request, maxAge: 3600, secure: secureCookies)
        let cookies = setCookie.map { [$0] } ?? []
        let hidden =
            ["id_token_hint", "post_logout_redirect_uri", "state", "client_id", "ui_locales"].compactMap { name in
                parameters[name].map { ["name": name, "value": $0] }
            } + [["name": "confirm", "value": "yes"]]
        return pages.page(
            "logout", lang: lang, client: checked.client, titleKey: "logout_title",
            values: ["action": "/oauth/logout", "csrf": csrf(binding), "hidden": hidden], formTarget: checked.redirect, cookies: cookies)
    }

    struct Refused: Error {
        var heading: String
        var detail: String
    }

    private func check(_ p: [String: String]) async throws -> Checked {
        let bad = Refused(heading: "error_bad_request_title", detail: "error_bad_request")
        var checked = Checked(state: p["state"])
        if let raw = p["id_token_hint"], !raw.isEmpty {
            guard let hint = await tokens.verifyIDTokenHint(raw) else { throw bad }
            checked.hint = hint
        }
        let clientID = p["client_id"] ?? checked.hint?.aud
        if let clientID, !clientID.isEmpty {
            // A hint from one client and a client_id of another: which client asks is unclear.
            if let hint = checked.hint, hint.aud != clientID { throw bad }
            do {
                checked.client = try await clients.resolve(clientID)
            } catch let error as GatehouseError where error.category != .internalFailure && error.category != .unavailable {
                throw bad
            }
        }
        if let redirect = p["post_logout_redirect_uri"], !redirect.isEmpty {
            // Never to an address the client did not register, and never without knowing the client.
            guard let client = checked.client, client.settings.postLogoutRedirectURIs.contains(redirect) else {
                throw Refused(heading: "error_redirect_title", detail: "error_redirect")
            }
            checked.redirect = redirect
        }
        return checked
    }

    private func csrf(_ binding: String) -> String {
        secret.csrfToken(for: "logout:\(binding)")
    }
}

extension Optional where Wrapped: Sendable {
    func asyncFlatMap<T>(_ transform: (Wrapped) async throws -> T?) async rethrows -> T? {
        switch self {
        case .some(let value): try await transform(value)
        case .none: nil
        }
    }
}
