import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `GET /passkeys/new` and its form: a browser signed in on the hosted pages (in the last 15 minutes,
/// and past its second factor when the user has one) creates a passkey, for a client that offers them
/// (`client_id`), then goes on to one of the client's redirect URIs when it named one (`redirect_uri`,
/// matched exactly) or sees that it is done. An app sends its user here after a sign-in, or links to
/// it from its settings.
struct PasskeyPageRoutes: Sendable {
    let passkeys: PasskeysFlow
    let services: CoreServices
    let pages: HostedPages

    init(services: CoreServices, catalog: TemplateCatalog) {
        self.passkeys = PasskeysFlow(services: services)
        self.services = services
        self.pages = HostedPages(catalog: catalog)
    }

    /// The form is bound to the browser's session and the registration's flow.
    private func csrf(flowID: String, browser: BrowserPrincipal) -> String {
        services.secret.csrfToken(for: "passkey-new:" + flowID + ":" + browser.session.id.uuidString.lowercased())
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = pages.language(uiLocales: nil, request: request)
        let query = try request.queryFields()
        guard let clientID = query["client_id"].map({ String($0) }), !clientID.isEmpty, clientID.count <= 128 else {
            return pages.error(lang: lang, headingKey: "error_bad_request_title", detailKey: "error_bad_request", status: .badRequest)
        }
        guard let client = try? await services.clients.resolve(clientID) else {
            return pages.error(lang: lang, headingKey: "error_bad_request_title", detailKey: "error_bad_request", status: .badRequest)
        }
        let redirect = query["redirect_uri"].map { String($0) }
        if let redirect, !client.redirectURIs.contains(redirect) {
            return pages.error(
                lang: lang, client: client, headingKey: "error_redirect_title", detailKey: "error_redirect", status: .badRequest)
        }
        guard let browser = context.browser else {
            return pages.error(
                lang: lang, client: client, headingKey: "passkey_new_title", detailKey: "error_signin_first", status: .unauthorized)
        }
        do {
            let options = try await passkeys.registrationOptions(
                PasskeysFlow.Enrolling(browser, clientID: client.id), meta: context.meta)
            // The default encoder writes "/" as "\/": the data block cannot hold a closing tag.
            let json = String(decoding: try JSONEncoder().encode(options.publicKey), as: UTF8.self)
            var values: [String: Any] = [
                "action": "/passkeys/new", "flow_id": options.flowId, "csrf": csrf(flowID: options.flowId, browser: browser),
                "client_id": client.id, "passkey_options": json,
            ]
            if let redirect { values["redirect_uri"] = redirect }
            return pages.page(
                "passkey_new", lang: lang, client: client, titleKey: "passkey_new_title", values: values,
                script: HostedPages.passkeyCreateScriptHash)
        } catch let error as GatehouseError where error.code == .reauthenticationRequired {
            return pages.error(
                lang: lang, client: client, headingKey: "passkey_new_title", detailKey: "error_signin_again", status: .forbidden)
        } catch let error as GatehouseError where error.code == .notEnabled {
            return pages.error(
                lang: lang, client: client, headingKey: "passkey_new_title", detailKey: "error_passkeys_off", status: .forbidden)
        }
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        let lang = pages.language(uiLocales: nil, request: request)
        let fields = try await RequestDecoding.formFields(from: request)
        guard let browser = context.browser else {
            return pages.error(lang: lang, headingKey: "passkey_new_title", detailKey: "error_signin_first", status: .unauthorized)
        }
        guard let flowID = fields["flow_id"], let sent = fields["csrf"],
            Secrets.constantTimeEquals(sent, csrf(flowID: flowID, browser: browser)),
            let clientID = fields["client_id"], let client = try? await services.clients.resolve(clientID)
        else { return pages.error(lang: lang, headingKey: "error_title", detailKey: "error_expired_form", status: .forbidden) }
        let redirect = fields["redirect_uri"].flatMap { client.redirectURIs.contains($0) ? $0 : nil }
        do {
            guard let raw = fields["credential"], raw.utf8.count <= 96 * 1024,
                let credential = try? JSONDecoder().decode(RegistrationCredential.self, from: Data(raw.utf8))
            else { throw GatehouseError.invalidPasskey(.malformed("the page's answer is not a RegistrationResponseJSON")) }
            let name = fields["name"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
            _ = try await passkeys.register(
                PasskeysFlow.Enrolling(browser, clientID: client.id),
                request: PasskeyRegistrationRequest(flowId: flowID, credential: credential, name: name), meta: context.meta)
        } catch let error as GatehouseError
            where [.invalidPasskey, .challengeExpired, .authenticatorExists, .validationFailed, .reauthenticationRequired].contains(
                error.code)
        {
            let detail = error.code == .reauthenticationRequired ? "error_signin_again" : "error_passkey_new"
            return pages.error(lang: lang, client: client, headingKey: "passkey_new_title", detailKey: detail, status: .badRequest)
        }
        var values: [String: Any] = [:]
        if let redirect { values["continue_url"] = redirect }
        return pages.page("passkey_added", lang: lang, client: client, titleKey: "passkey_added_title", values: values)
    }
}
