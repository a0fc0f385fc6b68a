import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK: the hosted sign-in and web sessions")
struct BrowserSDKTests {
    static let redirect = "com.example.browser:/done"

    @Test(
        "SDK-16: webSessionURL signs a browser in as the app's user and lands where asked (a foreign redirect_to is refused); browserSignInURL's hosted sign-in then needs no password in that browser and completeBrowserSignIn signs a second app in as the same user; without a session the hosted form signs in and handle(url:) completes it; a redirect naming another issuer, or a foreign state, is refused"
    )
    func hostedSignIn() async throws {
        let live = try await LiveServer.start()
        let server = live.server
        let base = URL(string: live.base)!
        try await server.createClient(
            id: "browser-app", redirectURIs: [Self.redirect],
            settings: ["email_verification=off", "allowed_origins=https://web.example.com"])
        func client() -> AuthClient {
            AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "browser-app", redirectURL: URL(string: Self.redirect)!, store: InMemorySessionStore()))
        }
        let app = client()
        let email = "browser-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        guard case .signedIn(let signedUp) = try await app.signUp(email: email, password: "a browser passphrase") else {
            Issue.record("sign-up did not sign in")
            return
        }
        let user = signedUp.user

        // From the app into the web.
        let refused = try await #require(throws: SDKError.self) { try await app.webSessionURL(redirectTo: "https://evil.example/account") }
        #expect(refused.code == .validationFailed)
        let webURL = try await app.webSessionURL(redirectTo: "https://web.example.com/account")
        let opened = try await NoRedirectHTTP.send("GET", webURL)
        #expect(opened.status == 303 && opened.location?.absoluteString == "https://web.example.com/account", "\(opened.status)")
        let browserCookie = try #require(opened.cookie)
        #expect(browserCookie.hasPrefix("gh_session="))

        // A second app on the same device signs in through the hosted page: that browser needs no password.
        let second = client()
        let start = try await second.browserSignInURL()
        #expect(start.path == "/oauth/authorize")
        let sso = try await NoRedirectHTTP.send("GET", start, headers: ["Cookie": browserCookie])
        let back = try #require(sso.location, "\(sso.status) \(sso.text)")
        #expect(back.absoluteString.hasPrefix(Self.redirect + "?code="))
        let result = try await second.signIn(fromBrowserRedirect: back)
        #expect(result.user.id == user.id && !result.isNew)
        #expect(second.currentUser?.email == email)

        // Without a browser session: the hosted form, then handle(url:).
        let third = client()
        let fresh = try await third.browserSignInURL(loginHint: email)
        let toPage = try await NoRedirectHTTP.send("GET", fresh)
        let flowCookie = try #require(toPage.cookie)
        let pagePath = try #require(toPage.location)
        let page = try await NoRedirectHTTP.send(
            "GET", URL(string: pagePath.absoluteString, relativeTo: base)!, headers: ["Cookie": flowCookie])
        #expect(page.status == 200 && page.text.contains("value=\"\(email)\""), "the login_hint is filled in")
        func field(_ marker: String) -> String {
            guard let range = page.text.range(of: marker) else { return "" }
            return String(page.text[range.upperBound...].prefix { $0 != "\"" })
        }
        let action = field("<form id=\"signin\" method=\"post\" action=\"")
        let posted = try await NoRedirectHTTP.form(
            URL(string: action, relativeTo: base)!,
            [("csrf", field("name=\"csrf\" value=\"")), ("email", email), ("password", "a browser passphrase")],
            headers: ["Cookie": flowCookie])
        let returned = try #require(posted.location, "\(posted.status) \(posted.text)")
        #expect(try await third.handle(url: returned))
        #expect(third.currentUser?.id == user.id)

        // Mix-up and foreign answers.
        let fourth = client()
        let mixStart = try await fourth.browserSignInURL()
        let state = try #require(
            URLComponents(url: mixStart, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        var forged = URLComponents(string: Self.redirect)!
        forged.queryItems = [
            URLQueryItem(name: "code", value: "gh_ac_x"), URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "iss", value: "https://evil.example"),
        ]
        let mixUp = try await #require(throws: SDKError.self) { try await fourth.signIn(fromBrowserRedirect: forged.url!) }
        #expect(mixUp.code == .invalidRequest)
        _ = try await fourth.browserSignInURL()
        forged.queryItems = [URLQueryItem(name: "code", value: "gh_ac_x"), URLQueryItem(name: "state", value: "not-ours")]
        await #expect(throws: SDKError.self) { try await fourth.signIn(fromBrowserRedirect: forged.url!) }

        await live.stop()
    }

    @Test(
        "SDK-17: a user who signs up on the hosted page is new to the app: the SDK's browser sign-in reports isNew true, and false the next time"
    )
    func hostedSignUpIsNew() async throws {
        let live = try await LiveServer.start()
        let base = URL(string: live.base)!
        try await live.server.createClient(id: "browser-new", redirectURIs: [Self.redirect], settings: ["email_verification=off"])
        let email = "new-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        func page(_ url: URL, cookie: String?) async throws -> (NoRedirectHTTP.Answer, (String) -> String) {
            let answer = try await NoRedirectHTTP.send("GET", url, headers: cookie.map { ["Cookie": $0] } ?? [:])
            return (
                answer,
                { marker in
                    guard let range = answer.text.range(of: marker) else { return "" }
                    return String(answer.text[range.upperBound...].prefix { $0 != "\"" })
                }
            )
        }
        var results: [Bool] = []
        for round in 0..<2 {
            let app = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "browser-new", redirectURL: URL(string: Self.redirect)!, store: InMemorySessionStore()))
            let toPage = try await NoRedirectHTTP.send("GET", try await app.browserSignInURL(prompt: "login"))
            let flowCookie = try #require(toPage.cookie)
            let flowPath = try #require(toPage.location).absoluteString
            let (shown, field) = try await page(
                URL(string: flowPath + (round == 0 ? "?view=signup" : ""), relativeTo: base)!, cookie: flowCookie)
            #expect(shown.status == 200, "\(shown.text)")
            let form = round == 0 ? "signup" : "signin"
            let action = field("<form id=\"\(form)\" method=\"post\" action=\"")
            let posted = try await NoRedirectHTTP.form(
                URL(string: action, relativeTo: base)!,
                [("csrf", field("name=\"csrf\" value=\"")), ("email", email), ("password", "a new passphrase")],
                headers: ["Cookie": flowCookie])
            let returned = try #require(posted.location, "\(posted.status) \(posted.text)")
            let result = try await app.signIn(fromBrowserRedirect: returned)
            #expect(result.user.email == email)
            results.append(result.isNew)
        }
        #expect(results == [true, false])
        await live.stop()
    }
}
