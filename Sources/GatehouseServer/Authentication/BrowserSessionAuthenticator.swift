import GatehouseCore
import Hummingbird

/// The browser-session cookie of the hosted pages. An unknown, expired or ended session is "not mine":
/// the page then asks the user to sign in instead of failing.
struct BrowserSessionAuthenticator: RequestAuthenticator {
    let sessions: BrowserSessions

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let value = Cookies(request)[BrowserSessionCookie.name] else { return nil }
        return try await sessions.authenticate(cookieValue: value).map(Identity.browser)
    }
}

extension AppRequestContext {
    /// The signed-in browser, on the routes that stack ``BrowserSessionAuthenticator``.
    var browser: BrowserPrincipal? {
        if case .browser(let principal) = identity { return principal }
        return nil
    }
}
