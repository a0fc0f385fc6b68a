import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Renders the hosted sign-in's pages: the client's branding, the reader's language (`ui_locales`
/// first, then `Accept-Language`), and security headers that let a form lead only back here or to
/// the client's registered redirect.
struct HostedPages: Sendable {
    let catalog: TemplateCatalog

    static let defaultBrandColor = "#2754c5"

    /// The only scripts pages run, allowed by their hashes: the form_post answer submits itself, and
    /// the logout page moves on to the client once its front-channel frames loaded (both pages'
    /// buttons and links work without them).
    static let formPostScript = "document.forms[0].submit()"
    static let formPostScriptHash = hash(formPostScript)
    static let continueScript =
        #"addEventListener("load",function(){var a=document.getElementById("continue");if(a)location.replace(a.href)})"#
    static let continueScriptHash = hash(continueScript)

    static let passkeyScriptHash = hash(PasskeyScript.text)
    static let passkeyCreateScriptHash = hash(PasskeyCreateScript.text)
    /// The scripts a page may name by hash.
    static let scripts = [
        continueScriptHash: continueScript, passkeyScriptHash: PasskeyScript.text, passkeyCreateScriptHash: PasskeyCreateScript.text,
    ]

    static func hash(_ script: String) -> String { "sha256-" + Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString() }

    func language(uiLocales: String?, request: Request) -> String {
        if let uiLocales, !uiLocales.isEmpty {
            // ui_locales is space-separated, best first; give it the shape Accept-Language has.
            let preference = uiLocales.split(separator: " ").prefix(8).joined(separator: ",")
            let lang = catalog.language(for: preference)
            if lang != TemplateCatalog.fallbackLanguage || preference.lowercased().hasPrefix("en") { return lang }
        }
        return catalog.language(for: request.headers[.acceptLanguage])
    }

    func branding(_ client: ClientRecord?) -> [String: Any] {
        var values: [String: Any] = [
            "client_name": client?.name ?? "Gatehouse",
            "brand_color": client?.settings.brandColor ?? Self.defaultBrandColor,
        ]
        // Only when set: an empty string would still open the template's section.
        if let logo = client?.settings.logoURL { values["logo_url"] = logo }
        return values
    }

    /// A page of the flow. `formTarget`: the client's redirect URI, where a form's redirect may lead.
    /// `strings`: the page's strings when the caller already made them (with the same `texts`).
    func page(
        _ name: String, lang: String, client: ClientRecord?, titleKey: String, values: [String: Any], texts: [String: String] = [:],
        strings: [String: String]? = nil, status: HTTPResponse.Status = .ok, formTarget: String? = nil, cookies: [String] = [],
        frames: [String] = [], script: String? = nil, widget: [String] = []
    ) -> Response {
        let strings = strings ?? self.strings(lang: lang, client: client, texts: texts)
        let title = strings[titleKey] ?? titleKey
        var values = values
        if let script { values["script"] = Self.scripts[script] ?? "" }
        let html = catalog.hostedPage(name, lang: lang, title: title, values: values, strings: strings, branding: branding(client))
        return Self.respond(
            html, status: status, formAction: formTarget.flatMap(Self.source(of:)), cookies: cookies, script: script,
            frames: frames.compactMap(Self.source(of:)), widget: widget)
    }

    /// An error page: nothing proves where to send the browser, so it stays here.
    func error(
        lang: String, client: ClientRecord? = nil, headingKey: String, detailKey: String, status: HTTPResponse.Status,
        cookies: [String] = []
    )
        -> Response
    {
        let strings = strings(lang: lang, client: client)
        return page(
            "error", lang: lang, client: client, titleKey: headingKey,
            values: ["heading": strings[headingKey] ?? headingKey, "detail": strings[detailKey] ?? detailKey], strings: strings,
            status: status, cookies: cookies)
    }

    /// The strings of a page: the language's, with the client's name and `texts` filled in.
    func strings(lang: String, client: ClientRecord?, texts: [String: String] = [:]) -> [String: String] {
        var texts = texts
        texts["client_name"] = client?.name ?? "Gatehouse"
        return catalog.hostedStrings(lang: lang, values: texts)
    }

    /// The answer to the client: a redirect, or a page whose form the browser posts there.
    func respond(_ answer: AuthorizationResponse, lang: String, cookies: [String] = []) throws -> Response {
        switch answer.mode {
        case .query:
            var response = PageResponses.redirect(to: try AuthorizationCodes.append(answer.fields, to: answer.redirectURI))
            for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
            return response
        case .device:
            // The code stayed with the device: the browser learns only how it went.
            let approved = answer.fields.contains { $0.0 == "device" && $0.1 == "approved" }
            return error(
                lang: lang, headingKey: approved ? "device_approved_title" : "device_denied_title",
                detailKey: approved ? "device_approved" : "device_denied", status: .ok, cookies: cookies)
        case .formPost:
            let html = catalog.hostedDocument(
                "form_post", lang: lang,
                values: ["redirect_uri": answer.redirectURI, "fields": answer.fields.map { ["name": $0.0, "value": $0.1] }], texts: [:])
            return Self.respond(
                html, status: .ok, formAction: Self.source(of: answer.redirectURI), cookies: cookies, script: Self.formPostScriptHash)
        }
    }

    /// Where a step of the hosted sign-in leads: the flow's next page, or the client's answer; with
    /// the browser's new session cookie when one began.
    func answer(
        _ outcome: AuthorizeFlow.Outcome, request: Request, browserCookie: String?, sessionLifetime: Int, secure: Bool
    ) throws -> Response {
        let cookies =
            browserCookie.map { [BrowserSessionCookie.make(value: $0, maxAge: sessionLifetime, secure: secure).headerValue] } ?? []
        switch outcome {
        case .show(let id):
            var response = PageResponses.redirect(to: URL(string: "/authorize/\(id.uuidString.lowercased())")!)
            for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
            return response
        case .respond(let answer):
            return try respond(answer, lang: language(uiLocales: nil, request: request), cookies: cookies)
        }
    }

    static func respond(
        _ html: String, status: HTTPResponse.Status, formAction: String?, cookies: [String], script: String? = nil,
        frames: [String] = [], widget: [String] = []
    ) -> Response {
        // A bot challenge widget (`widget`: its provider's origins) loads its script, frames and calls
        // from its provider and nowhere else.
        let scripts = (script.map { ["'\($0)'"] } ?? []) + widget
        let frameSources = Array(Set(frames + widget)).sorted()
        let csp =
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: https:; "
            + "form-action 'self'\(formAction.map { " " + $0 } ?? ""); frame-ancestors 'none'; base-uri 'none'"
            + (scripts.isEmpty ? "" : "; script-src " + scripts.joined(separator: " "))
            + (frameSources.isEmpty ? "" : "; frame-src " + frameSources.joined(separator: " "))
            + (widget.isEmpty ? "" : "; connect-src " + widget.joined(separator: " "))
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .contentSecurityPolicy: csp,
            HTTPField.Name("X-Frame-Options")!: "DENY",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
            .cacheControl: "no-store",
        ]
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The CSP source that allows a form (or the redirect after it) to reach `uri`: its origin for
    /// http(s), its scheme for an app's private-use scheme. Browsers apply `form-action` to the
    /// redirects that follow a form post, so the client's redirect must be allowed.
    static func source(of uri: String) -> String? {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased() else { return nil }
        guard scheme == "http" || scheme == "https" else {
            return scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) } ? scheme + ":" : nil
        }
        guard let host = components.host, !host.isEmpty,
            host.allSatisfy({ $0.isLetter || $0.isNumber || "-.[]:".contains($0) })
        else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }
}
