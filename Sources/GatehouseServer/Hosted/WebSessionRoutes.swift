import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `POST /v1/web-session` (the app asks) and `GET /web-session` (the browser opens it).
struct WebSessionRoutes: Sendable {
    let flow: WebSessionFlow
    let pages: HostedPages
    let secureCookies: Bool
    let sessionLifetime: Int

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.flow = WebSessionFlow(services: services)
        self.pages = HostedPages(catalog: catalog)
        self.secureCookies = services.settings.secureCookies
        self.sessionLifetime = Int(services.settings.browserSessionLifetime)
    }

    @Sendable func create(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let body = try await RequestDecoding.optionalJSON(WebSessionRequest.self, from: request, context: context)
        return try Responses.json(
            try await flow.create(context.principal, redirectTo: body?.redirectTo, meta: context.meta), status: .created, noStore: true)
    }

    @Sendable func open(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = pages.language(uiLocales: nil, request: request)
        guard let token = (try request.queryFields())["token"], !token.isEmpty else {
            return pages.error(lang: lang, headingKey: "error_bad_request_title", detailKey: "error_bad_request", status: .badRequest)
        }
        let current = context.browser
        do {
            let (target, cookie) = try await flow.open(token: String(token), current: current?.session, meta: context.meta)
            guard let url = URL(string: target) else { throw GatehouseError.badRequest("The target is not a URL.") }
            var response = PageResponses.redirect(to: url)
            if let cookie {
                response.headers.append(
                    HTTPField(
                        name: .setCookie,
                        value: BrowserSessionCookie.make(value: cookie, maxAge: sessionLifetime, secure: secureCookies).headerValue))
            }
            return response
        } catch is WebSessionFlow.OtherUser {
            return pages.error(lang: lang, headingKey: "web_session_title", detailKey: "web_session_other_user", status: .conflict)
        } catch let error as GatehouseError
            where error.category != .internalFailure && error.category != .unavailable && error.category != .rateLimited
        {
            return pages.error(lang: lang, headingKey: "web_session_title", detailKey: "web_session_failed", status: .gone)
        }
    }
}
