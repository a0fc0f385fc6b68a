import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The hosted pages behind the links in mail: `/verify`, `/reset` and `/magic-link`. Server-rendered, no JavaScript,
/// a CSRF token on the form, localized by `Accept-Language`.
struct PageRoutes: Sendable {
    let verification: VerificationFlow
    let recovery: RecoveryFlow
    let magicLink: MagicLinkFlow
    let catalog: TemplateCatalog
    let secret: ServerSecret
    let passwordPolicy: PasswordPolicy
    let secureCookies: Bool

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.verification = VerificationFlow(services: services)
        self.recovery = RecoveryFlow(services: services)
        self.magicLink = MagicLinkFlow(services: services)
        self.catalog = catalog
        self.secret = services.secret
        self.passwordPolicy = services.settings.passwordPolicy
        self.secureCookies = services.settings.secureCookies
    }

    static let csrfCookie = "gh_csrf"

    static let verifyCookie = "gh_csrf_verify"

    /// The link in the mail opens a page that asks; only its POST verifies. Mail scanners and link
    /// previews fetch links with GET, and must not use up the link (or the code beside it).
    @Sendable func verifyPage(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        guard let token = (try request.queryFields())["token"], !token.isEmpty, token.utf8.count <= 256 else {
            return failed(lang, status: .badRequest)
        }
        guard try await verification.linkIsOpen(token: String(token)) else { return failed(lang, status: .gone) }
        return askingPage(
            "verify", lang: lang, values: ["title": catalog.string("verify_title", lang: lang)], token: String(token),
            cookie: Self.verifyCookie, path: "/verify")
    }

    /// A link's page that asks before it uses the link: its one button posts the token with a CSRF value
    /// derived from the nonce in a `SameSite=Strict` cookie scoped to `path`.
    func askingPage(
        _ template: String, lang: String, values: [String: String], token: String, cookie name: String, path: String
    ) -> Response {
        let nonce = Base64URL.encode(Secrets.randomBytes(16))
        let html = catalog.page(
            template, lang: lang, values: values.merging(["token": token, "csrf": secret.csrfToken(for: nonce)]) { $1 })
        let cookie = SetCookie(name: name, value: nonce, path: path, maxAge: 3600, sameSite: .strict, secure: secureCookies).headerValue
        return PageResponses.html(html, status: .ok, cookie: cookie)
    }

    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        let fields = try await RequestDecoding.formFields(from: request)
        guard let token = fields["token"], !token.isEmpty else {
            return failed(lang, status: .badRequest)
        }
        guard let nonce = Cookies(request)[Self.verifyCookie], let sent = fields["csrf"],
            secret.csrfMatches(sent, for: nonce)
        else {
            return message(lang, title: "failed_title", body: "expired_form", status: .forbidden)
        }
        let (binding, setCookie) = FlowBindingCookie.binding(request, maxAge: 3600, secure: secureCookies)
        do {
            switch try await verification.followLink(token: token, binding: binding) {
            case .redirect(let url):
                return PageResponses.redirect(to: url)
            case .continueFlow(let id):
                var response = PageResponses.redirect(to: URL(string: "/authorize/\(id.uuidString.lowercased())")!)
                if let setCookie { response.headers.append(HTTPField(name: .setCookie, value: setCookie)) }
                return response
            case .confirmed(let email):
                return message(lang, title: "verified_title", body: "verified_body", values: ["email": email])
            }
        } catch let error as GatehouseError where error.category != .internalFailure {
            return failed(lang, status: .gone)
        }
    }

    @Sendable func resetForm(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        guard let token = (try request.queryFields())["token"], !token.isEmpty, token.utf8.count <= 256 else {
            return failed(lang, status: .badRequest)
        }
        return form(lang, token: String(token), error: nil, status: .ok)
    }

    @Sendable func reset(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        let fields = try await RequestDecoding.formFields(from: request)
        let token = fields["token"] ?? ""
        guard let nonce = Cookies(request)[Self.csrfCookie], let sent = fields["csrf"],
            secret.csrfMatches(sent, for: nonce)
        else {
            return form(lang, token: token, error: catalog.string("expired_form", lang: lang), status: .forbidden)
        }
        guard let password = fields["password"], fields["confirm"] == password else {
            return form(lang, token: token, error: catalog.string("mismatch", lang: lang), status: .unprocessableContent)
        }
        do {
            try await recovery.reset(token: token, password: password, meta: context.meta)
        } catch let error as GatehouseError where error.code == .validationFailed {
            let message = error.fieldErrors.first.map { catalog.message(for: $0, lang: lang) } ?? error.title
            return form(lang, token: token, error: message, status: .unprocessableContent)
        } catch let error as GatehouseError where ![.internalFailure, .rateLimited, .unavailable].contains(error.category) {
            return failed(lang, status: .gone)
        }
        return message(lang, title: "reset_done_title", body: "reset_done_body")
    }

    private func form(_ lang: String, token: String, error: String?, status: HTTPResponse.Status) -> Response {
        let nonce = Base64URL.encode(Secrets.randomBytes(16))
        var values: [String: Any] = [
            "title": catalog.string("reset_title", lang: lang), "token": token, "csrf": secret.csrfToken(for: nonce),
            "min_length": passwordPolicy.minLength,
        ]
        // Only when there is one: a boxed nil would render as the word "nil".
        if let error { values["error"] = error }
        let html = catalog.page("reset", lang: lang, values: values)
        let cookie = SetCookie(name: Self.csrfCookie, value: nonce, path: "/reset", maxAge: 3600, sameSite: .strict, secure: secureCookies)
            .headerValue
        return PageResponses.html(html, status: status, cookie: cookie)
    }

    func message(
        _ lang: String, title: String, body: String, values: [String: String] = [:], status: HTTPResponse.Status = .ok
    ) -> Response {
        let html = catalog.page(
            "message", lang: lang,
            values: ["title": catalog.string(title, lang: lang), "body": catalog.string(body, lang: lang, values: values)])
        return PageResponses.html(html, status: status)
    }

    func failed(_ lang: String, status: HTTPResponse.Status) -> Response {
        message(lang, title: "failed_title", body: "failed_body", status: status)
    }
}
