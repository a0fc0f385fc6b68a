import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

extension PageRoutes {
    static let magicLinkCookie = "gh_csrf_magic"

    /// The magic link opens a page that asks; only its POST signs in. Mail scanners and link previews
    /// fetch links with GET, and must not use up the link (or the code beside it).
    @Sendable func magicLinkPage(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        guard let token = (try request.queryFields())["token"], !token.isEmpty, token.utf8.count <= 256 else {
            return failed(lang, status: .badRequest)
        }
        guard let clientName = try await magicLink.clientName(ofOpenLink: String(token)) else { return failed(lang, status: .gone) }
        return askingPage(
            "magic_link", lang: lang, values: ["title": catalog.string("magic_link_title", lang: lang), "client_name": clientName],
            token: String(token), cookie: Self.magicLinkCookie, path: "/magic-link")
    }

    /// Signs in for the app's authorization code and sends the browser back into the app with it. The
    /// code is bound to the app's PKCE challenge: a browser on another device gets a redirect it
    /// cannot turn into a session.
    @Sendable func magicLink(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        let fields = try await RequestDecoding.formFields(from: request)
        guard let token = fields["token"], !token.isEmpty, token.utf8.count <= 256 else { return failed(lang, status: .badRequest) }
        guard let nonce = Cookies(request)[Self.magicLinkCookie], let sent = fields["csrf"], secret.csrfMatches(sent, for: nonce) else {
            return message(lang, title: "failed_title", body: "expired_form", status: .forbidden)
        }
        do {
            switch try await magicLink.followLink(token: token, meta: context.meta) {
            case .redirect(let url): return PageResponses.redirect(to: url)
            case .openInApp: return message(lang, title: "magic_link_app_title", body: "magic_link_app_body")
            }
        } catch let error as GatehouseError where ![.internalFailure, .rateLimited, .unavailable].contains(error.category) {
            return failed(lang, status: .gone)
        }
    }
}
