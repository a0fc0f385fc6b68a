import GatehouseCore
import Hummingbird

/// The console's session cookie: an operator signed in by a one-time link from the CLI. Unknown or
/// ended sessions are "not mine", and the console's context then refuses the request.
struct ConsoleAuthenticator: RequestAuthenticator {
    static let cookie = "gh_console"
    let access: ConsoleAccess

    func authenticate(_ request: Request) async throws -> Identity? {
        guard let token = Cookies(request)[Self.cookie] else { return nil }
        return try await access.principal(sessionToken: token).map(Identity.admin)
    }
}

/// Console errors as console pages: operators see what failed; a missing session points at the link.
struct ConsoleErrorRenderer: ErrorRenderer {
    let templates: ConsoleTemplates

    func render(_ error: GatehouseError, request: Request) -> Response {
        let signIn = error.category == .unauthenticated
        let html = templates.render(
            "message", title: signIn ? "Sign in" : error.title, operatorName: nil, csrf: nil,
            values: [
                "body": signIn ? "The console needs a sign-in link." : (error.detail ?? error.title),
                "hint": signIn ? "On the server, run: gatehouse console link --operator YOUR-NAME, and open the link it prints." : "",
            ])
        var response = PageResponses.html(html, status: HTTPStatusMapping.status(for: error.category))
        if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }
}
