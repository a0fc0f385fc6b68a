import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `/device` (RFC 8628 §3.3): where a person types the code a TV or a command line shows, then signs
/// in on the hosted pages and approves on a consent page that names the device's client. HTTP in and
/// out; the rules are ``DeviceAuthorizations``' and ``AuthorizeFlow``'s.
struct DeviceRoutes: Sendable {
    let flow: AuthorizeFlow
    let pages: HostedPages
    let secret: ServerSecret
    let services: CoreServices
    let secureCookies: Bool
    let flowLifetime: Int

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.flow = AuthorizeFlow(services: services)
        self.pages = HostedPages(catalog: catalog)
        self.secret = services.secret
        self.services = services
        self.secureCookies = services.settings.secureCookies
        self.flowLifetime = Int(services.settings.flowLifetime)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = try FormBody.fields(Array((request.uri.query ?? "").utf8))
        return form(request, userCode: query["user_code"].map { String($0.prefix(16)) } ?? "", errorKey: nil, status: .ok)
    }

    /// Counted per address block before the code is looked up (`code_verify`): a user code has 34
    /// bits, so guessing is bounded by the limit, not by luck.
    @Sendable func enter(_ request: Request, context: AppRequestContext) async throws -> Response {
        let fields = try await RequestDecoding.formFields(from: request)
        let (binding, _) = FlowBindingCookie.binding(request, maxAge: max(flowLifetime, 3600), secure: secureCookies)
        guard Cookies(request)[FlowBindingCookie.name] != nil, let sent = fields["csrf"], secret.csrfMatches(sent, for: Self.nonce(binding))
        else {
            return pages.error(
                lang: pages.language(uiLocales: nil, request: request), headingKey: "error_title", detailKey: "error_expired_form",
                status: .forbidden)
        }
        let userCode = String((fields["user_code"] ?? "").prefix(32))
        try await services.rateLimits.consume(
            .codeVerify, ip: context.meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        do {
            switch try await flow.beginDevice(userCode: userCode, browser: context.browser, binding: binding, meta: context.meta) {
            case .show(let id):
                return PageResponses.redirect(to: URL(string: "/authorize/\(id.uuidString.lowercased())")!)
            case .respond(let answer):
                return try pages.respond(answer, lang: pages.language(uiLocales: nil, request: request))
            }
        } catch let error as GatehouseError where error.code == .codeExpired {
            return form(request, userCode: userCode, errorKey: "error_device_code", status: .badRequest)
        }
    }

    private func form(_ request: Request, userCode: String, errorKey: String?, status: HTTPResponse.Status) -> Response {
        let lang = pages.language(uiLocales: nil, request: request)
        let (binding, setCookie) = FlowBindingCookie.binding(request, maxAge: max(flowLifetime, 3600), secure: secureCookies)
        let strings = pages.strings(lang: lang, client: nil)
        var values: [String: Any] = [
            "action": "/device", "csrf": secret.csrfToken(for: Self.nonce(binding)), "user_code": userCode,
        ]
        if let errorKey { values["error"] = strings[errorKey] ?? errorKey }
        return pages.page(
            "device", lang: lang, client: nil, titleKey: "device_title", values: values, strings: strings, status: status,
            cookies: setCookie.map { [$0] } ?? [])
    }

    private static func nonce(_ binding: String) -> String { "device:\(binding)" }
}
