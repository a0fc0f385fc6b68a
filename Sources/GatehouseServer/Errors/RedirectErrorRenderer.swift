import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// An error the authorization endpoint may send back to the client: only once the redirect URI has
/// been checked against the client's registered ones (RFC 6749 §4.1.2.1).
struct RedirectableError: Error, Sendable {
    var error: GatehouseError
    /// A redirect URI already matched exactly against the client's registration.
    var trustedRedirectURI: String
    var state: String?
    var issuer: String
}

/// Errors of the authorization endpoint: redirected to the client with `error`, `error_description`,
/// `state` and `iss` (RFC 9207) when the redirect URI is trusted, else shown on a page — never
/// redirected to an address nobody registered.
struct RedirectErrorRenderer: ErrorRenderer {
    let page: PageErrorRenderer

    func render(_ error: GatehouseError, request: Request) -> Response {
        page.render(error, request: request)
    }

    func render(_ redirectable: RedirectableError, request: Request) -> Response {
        guard var components = URLComponents(string: redirectable.trustedRedirectURI) else {
            return page.render(redirectable.error, request: request)
        }
        var items = components.queryItems ?? []
        items.append(URLQueryItem(name: "error", value: OAuthErrorRenderer.oauthCode(for: redirectable.error).rawValue))
        if let detail = redirectable.error.detail { items.append(URLQueryItem(name: "error_description", value: detail)) }
        if let state = redirectable.state { items.append(URLQueryItem(name: "state", value: state)) }
        items.append(URLQueryItem(name: "iss", value: redirectable.issuer))
        components.queryItems = items
        guard let url = components.url else { return page.render(redirectable.error, request: request) }
        return PageResponses.redirect(to: url)
    }
}
