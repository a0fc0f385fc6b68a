import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `/oauth/authorize` and the pages it leads through (`/authorize/{flow}`): HTTP in and out; the
/// rules are ``AuthorizeFlow``'s. Every form carries a CSRF token bound to the flow and to this
/// browser's flow cookie.
struct AuthorizeRoutes: Sendable {
    let flow: AuthorizeFlow
    let recovery: RecoveryFlow
    let socialWeb: SocialWebFlow
    let providers: [String: SocialProvider]
    let pages: HostedPages
    let sessions: BrowserSessions
    let secret: ServerSecret
    let secureCookies: Bool
    let flowLifetime: Int
    let sessionLifetime: Int
    let minPasswordLength: Int
    let challenge: BotChallengeWidget?

    static let bindingCookie = FlowBindingCookie.name

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.flow = AuthorizeFlow(services: services)
        self.recovery = RecoveryFlow(services: services)
        self.socialWeb = SocialWebFlow(services: services)
        self.providers = services.social.providers
        self.pages = HostedPages(catalog: catalog)
        self.sessions = services.browserSessions
        self.secret = services.secret
        self.secureCookies = services.settings.secureCookies
        self.flowLifetime = Int(services.settings.flowLifetime)
        self.sessionLifetime = Int(services.settings.browserSessionLifetime)
        self.minPasswordLength = services.settings.passwordPolicy.minLength
        self.challenge = services.botChallenge.service.map(BotChallengeWidget.init)
    }

    // MARK: The authorization endpoint

    @Sendable func authorize(_ request: Request, context: AppRequestContext) async throws -> Response {
        if request.method == .post {
            // A cross-site POST brings no SameSite=Lax cookie (no single sign-on, and a new flow binding
            // would replace the browser's): the same request as a top-level GET brings them.
            let fields = try await RequestDecoding.formFields(from: request)
            return PageResponses.redirect(
                to: URL(string: "/oauth/authorize?" + FormEncoding.encode(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))!)
        }
        let parameters = try FormBody.fields(Array((request.uri.query ?? "").utf8))
        let lang = pages.language(uiLocales: parameters["ui_locales"], request: request)
        let binding = binding(request).0
        let browser = context.browser
        do {
            switch try await flow.begin(parameters, browser: browser, binding: binding, meta: context.meta) {
            case .respond(let answer):
                return try pages.respond(answer, lang: lang)
            case .show(let id):
                // Set again even when the browser had it: its lifetime must outlast the new flow's.
                return redirect(
                    to: id, cookies: [FlowBindingCookie.make(value: binding, maxAge: max(flowLifetime, 3600), secure: secureCookies)])
            }
        } catch let untrusted as AuthorizationRequest.Untrusted {
            let redirectProblem = untrusted.detail.contains("redirect_uri")
            return pages.error(
                lang: lang, headingKey: redirectProblem ? "error_redirect_title" : "error_bad_request_title",
                detailKey: redirectProblem ? "error_redirect" : "error_bad_request", status: .badRequest)
        }
    }

    // MARK: Pages

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try flowID(context)
        guard let binding = Cookies(request)[Self.bindingCookie] else { return expired(request) }
        let browser = context.browser
        let page = try await flow.page(id, binding: binding, browser: browser)
        let lang = pages.language(uiLocales: page.request.uiLocales, request: request)
        let query = try request.queryFields()
        // A provider's sign-in that failed comes back here with its error code.
        let error = query["error"].map {
            $0 == "identity_link_required" ? "error_identity_link_required" : "error_social"
        }
        return render(
            page, lang: lang, binding: binding, view: query["view"], error: error,
            status: error == nil ? .ok : .unauthorized)
    }

    @Sendable func act(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try flowID(context)
        let action = context.parameters.get("action") ?? ""
        let fields = try await RequestDecoding.formFields(from: request)
        guard let binding = Cookies(request)[Self.bindingCookie], let sent = fields["csrf"],
            secret.csrfMatches(sent, for: csrfNonce(id, binding))
        else { return expired(request) }
        let browser = context.browser
        var meta = context.meta
        meta.botChallengeToken = BotChallengeWidget.token(in: fields) ?? meta.botChallengeToken
        do {
            switch action {
            case "password":
                let (outcome, cookie) = try await flow.signIn(
                    id, binding: binding, email: fields["email"] ?? "", password: fields["password"] ?? "", browser: browser, meta: meta)
                return try await finish(outcome, request: request, binding: binding, cookie: cookie)
            case "signup":
                guard
                    let (outcome, cookie) = try await flow.signUp(
                        id, binding: binding, email: fields["email"] ?? "", password: fields["password"] ?? "",
                        acceptTerms: fields["accept"] == "yes", username: fields["username"].flatMap { $0.isEmpty ? nil : $0 },
                        browser: browser, meta: meta)
                else {
                    let page = try await flow.page(id, binding: binding, browser: browser)
                    return pages.page(
                        "check_mail", lang: language(page, request), client: page.client, titleKey: "check_mail_title",
                        values: ["signin_url": "/authorize/\(id)"], texts: ["email": fields["email"] ?? ""],
                        formTarget: page.request.redirectURI)
                }
                return try await finish(outcome, request: request, binding: binding, cookie: cookie)
            case "otp":
                let identifier = fields["identifier"] ?? ""
                _ = try await flow.sendCode(id, binding: binding, identifier: identifier, meta: meta)
                let page = try await flow.page(id, binding: binding, browser: browser)
                return render(
                    page, lang: language(page, request), binding: binding, view: "otp_code", submitted: ["identifier": identifier])
            case "otp-verify":
                let (outcome, cookie) = try await flow.verifyCode(
                    id, binding: binding, identifier: fields["identifier"] ?? "", code: fields["code"] ?? "", browser: browser, meta: meta)
                return try await finish(outcome, request: request, binding: binding, cookie: cookie)
            case "passkey":
                let (outcome, cookie) = try await flow.signIn(
                    id, binding: binding, passkey: fields["credential"] ?? "", browser: browser, meta: meta)
                return try await finish(outcome, request: request, binding: binding, cookie: cookie)
            case "factor":
                // A passkey answers with its credential, the others with a code.
                let factor = fields["factor"] ?? ""
                let response = factor == PasskeyFactor.factorID ? fields["credential"] ?? "" : fields["code"] ?? ""
                let (outcome, cookie) = try await flow.completeFactor(
                    id, binding: binding, factor: factor, response: response, meta: meta)
                return try await finish(outcome, request: request, binding: binding, cookie: cookie)
            case "factor-send":
                let sent = try await flow.sendFactorCode(id, binding: binding, factor: fields["factor"] ?? "", meta: meta)
                let page = try await flow.page(id, binding: binding, browser: browser)
                return render(
                    page, lang: language(page, request), binding: binding, view: "factor_sent",
                    submitted: ["identifier": sent.sentTo, "factor": fields["factor"] ?? ""])
            case "codes-kept":
                return try await finish(
                    try await flow.recoveryCodesKept(id, binding: binding, browser: browser), request: request, binding: binding)
            case "continue":
                guard let browser else { return redirect(to: id) }
                return try await finish(
                    try await flow.continueAs(id, binding: binding, browser: browser), request: request, binding: binding)
            case "terms":
                return try await finish(
                    try await flow.acceptTerms(id, binding: binding, accepted: fields["accept"] == "yes", browser: browser),
                    request: request, binding: binding)
            case "fields":
                return try await finish(
                    try await flow.submitFields(id, binding: binding, values: fields, browser: browser, meta: meta), request: request,
                    binding: binding)
            case "consent":
                return try await finish(
                    try await flow.consent(id, binding: binding, allow: fields["decision"] == "allow", browser: browser), request: request,
                    binding: binding)
            case "cancel":
                return try await finish(try await flow.cancel(id, binding: binding), request: request, binding: binding)
            case "recovery":
                let page = try await flow.page(id, binding: binding, browser: browser)
                let email = fields["email"] ?? ""
                _ = try await recovery.request(email: email, clientID: page.client.id, meta: meta)
                return pages.page(
                    "recovery", lang: language(page, request), client: page.client, titleKey: "recovery_title",
                    values: ["sent": true, "signin_url": "/authorize/\(id)"], texts: ["email": email], formTarget: page.request.redirectURI)
            default:
                throw GatehouseError.notFound("No such page.")
            }
        } catch let error as GatehouseError {
            guard let (key, status) = Self.shown(error) else { throw error }
            let page = try await flow.page(id, binding: binding, browser: browser)
            var response = render(
                page, lang: language(page, request), binding: binding, view: Self.view(after: action),
                error: key, fieldErrors: error.fieldErrors, submitted: fields, status: status)
            if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        }
    }

    private func finish(_ outcome: AuthorizeFlow.Outcome, request: Request, binding: String, cookie: String? = nil) async throws -> Response
    {
        try pages.answer(outcome, request: request, browserCookie: cookie, sessionLifetime: sessionLifetime, secure: secureCookies)
    }

    /// A provider button: the provider's round trip, back into this flow.
    @Sendable func social(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try flowID(context)
        let provider = try SocialRoutes.provider(context)
        guard let binding = Cookies(request)[Self.bindingCookie] else { return expired(request) }
        let page = try await flow.page(id, binding: binding, browser: nil)
        guard page.flow.step == .started else { throw GatehouseError.flowExpired }
        let started = try await socialWeb.startHosted(
            providerID: provider, authorizeFlowID: id, clientID: page.client.id, meta: context.meta)
        var response = PageResponses.redirect(to: started.providerURL)
        response.status = .found
        response.headers[.setCookie] =
            SocialRoutes.cookie(provider: provider, flowID: started.flowID, value: started.browserToken, secure: secureCookies).headerValue
        return response
    }

    // MARK: Rendering

    private func render(
        _ page: AuthorizeFlow.Page, lang: String, binding: String, view: String?, error: String? = nil, fieldErrors: [FieldError] = [],
        submitted: [String: String] = [:], status: HTTPResponse.Status = .ok
    ) -> Response {
        let id = page.flow.id
        let base = "/authorize/\(id)"
        // The strings are made once, with every value a page's text may name.
        var texts: [String: String] = [:]
        if view == "otp_code" || view == "factor_sent" { texts["identifier"] = submitted["identifier"] ?? "" }
        if page.flow.step == .started, let current = page.continueAs, let email = current.email ?? current.phone { texts["email"] = email }
        let strings = pages.strings(lang: lang, client: page.client, texts: texts)
        var values: [String: Any] = ["csrf": csrf(id, binding), "cancel_action": base + "/cancel", "signin_url": base]
        var script: String?
        if let error, let text = strings[error] { values["error"] = text }
        let name: String
        let title: String
        switch page.flow.step {
        case .terms:
            name = "terms"
            title = "terms_title"
            values["action"] = base + "/terms"
            values["terms"] = Self.terms(page.client, strings)
            if error != nil { values["error"] = strings["error_terms_required"] }
        case .fields:
            name = "fields"
            title = "fields_title"
            values["action"] = base + "/fields"
            values["fields"] = page.missingFields.map { field -> [String: Any] in
                var item: [String: Any] = [
                    "name": field, "label": strings["field_\(field)"] ?? field, "type": Self.inputType(field),
                    "autocomplete": Self.autocomplete(field), "value": submitted[field] ?? "",
                ]
                if let fieldError = fieldErrors.first(where: { $0.field == field }) {
                    item["error"] = strings[fieldError.code == .required ? "error_field_required" : "error_field_invalid"]
                }
                return item
            }
            if error != nil { values["error"] = nil }
        case .secondFactor:
            name = "factor"
            title = page.enrol ? "factor_enrol_title" : "factor_title"
            values["action"] = base + "/factor"
            values["send_action"] = base + "/factor-send"
            FactorPage.add(page, strings: strings, sent: view == "factor_sent" ? submitted["factor"] : nil, to: &values)
            script = addPasskey(page, conditional: false, action: base + "/factor", to: &values)
        case .recoveryCodes:
            name = "recovery_codes"
            title = "recovery_codes_title"
            values["action"] = base + "/codes-kept"
            values["codes"] = page.recoveryCodes
        case .consent:
            name = "consent"
            title = "consent_title"
            values["action"] = base + "/consent"
            values["scopes"] = page.request.scopes.map { ["name": $0, "description": strings["scope_\($0)"] ?? $0] }
        default:
            switch view {
            case "signup":
                name = "signup"
                title = "signup_title"
                values["action"] = base + "/signup"
                values["min_length"] = minPasswordLength
                values["terms"] = Self.terms(page.client, strings)
                if let email = submitted["email"] { values["email"] = email }
                if page.client.settings.usernames != .off {
                    values["username_field"] = ["required": page.client.settings.usernames == .required]
                    if let username = submitted["username"] { values["username"] = username }
                }
                if error == "error_field_invalid", let first = fieldErrors.first {
                    values["error"] = pages.catalog.message(for: first, lang: lang)
                }
            case "recovery":
                name = "recovery"
                title = "recovery_title"
                values["action"] = base + "/recovery"
            case "otp_code":
                name = "otp_code"
                title = "otp_code_title"
                values["action"] = base + "/otp-verify"
                values["identifier"] = submitted["identifier"] ?? ""
            default:
                name = "signin"
                title = "signin_title"
                values["password_action"] = base + "/password"
                values["continue_action"] = base + "/continue"
                values["recovery_url"] = base + "?view=recovery"
                values["signup_url"] = base + "?view=signup"
                if page.client.settings.usernames != .off { values["username_signin"] = true }
                let social = page.client.settings.socialProviders.compactMap { id -> [String: String]? in
                    guard let provider = providers[id] else { return nil }
                    return ["id": id, "name": Self.displayName(provider), "url": base + "/social/" + id]
                }
                if !social.isEmpty { values["social"] = social }
                if page.client.settings.methods.contains(where: { $0 == "email_otp" || $0 == "sms_otp" }) {
                    values["otp"] = true
                    values["otp_action"] = base + "/otp"
                }
                script = addPasskey(page, conditional: true, action: base + "/passkey", to: &values)
                if let hint = submitted["email"] ?? page.request.loginHint, !hint.isEmpty { values["login_hint"] = hint }
                if let email = texts["email"] { values["current_email"] = email }
            }
        }
        let widget = challenge?.place(onPage: name, client: page.client, into: &values) ?? []
        return pages.page(
            name, lang: lang, client: page.client, titleKey: title, values: values, strings: strings, status: status,
            formTarget: page.request.redirectURI, script: script, widget: widget)
    }

    /// The passkey form and its options on a page that offers one; answers the script's hash for the
    /// page's policy, or nil.
    private func addPasskey(_ page: AuthorizeFlow.Page, conditional: Bool, action: String, to values: inout [String: Any]) -> String? {
        // The default encoder writes "/" as "\/", so the data block cannot hold a closing tag.
        guard let options = page.passkeyOptions, let json = try? JSONEncoder().encode(options) else { return nil }
        values["passkey"] = true
        values["passkey_action"] = action
        values["passkey_options"] = String(decoding: json, as: UTF8.self)
        values["passkey_conditional"] = conditional ? "1" : "0"
        return HostedPages.passkeyScriptHash
    }

    // MARK: Plumbing

    private func language(_ page: AuthorizeFlow.Page, _ request: Request) -> String {
        pages.language(uiLocales: page.request.uiLocales, request: request)
    }

    private func csrf(_ id: UUID, _ binding: String) -> String { secret.csrfToken(for: csrfNonce(id, binding)) }

    private func csrfNonce(_ id: UUID, _ binding: String) -> String { "authorize:\(id.uuidString.lowercased()):\(binding)" }

    private func flowID(_ context: AppRequestContext) throws -> UUID {
        guard let raw = context.parameters.get("flow"), let id = UUID(uuidString: raw) else {
            throw GatehouseError.notFound("No such sign-in.")
        }
        return id
    }

    private func binding(_ request: Request) -> (String, String?) {
        FlowBindingCookie.binding(request, maxAge: max(flowLifetime, 3600), secure: secureCookies)
    }

    private func redirect(to id: UUID, cookies: [String] = []) -> Response {
        var response = PageResponses.redirect(to: URL(string: "/authorize/\(id.uuidString.lowercased())")!)
        for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return response
    }

    private func expired(_ request: Request) -> Response {
        pages.error(
            lang: pages.language(uiLocales: nil, request: request), headingKey: "error_title", detailKey: "error_expired_form",
            status: .forbidden)
    }
}
