import Foundation
import GatehouseAPI

extension AuthClient {
    /// A one-time URL (valid for a minute) that opens a web page where the app's user is already
    /// signed in: the browser gets a Gatehouse browser session, so the website's own sign-in
    /// (`/oauth/authorize`) needs no password. Open it in the system browser.
    ///
    /// - Parameter redirectTo: where the browser lands: a path on the Gatehouse server (`/account`),
    ///   one of the client's redirect URIs, or a URL under one of the client's allowed web origins.
    ///   Anything else is refused with `validation_failed`. Nil: the server's root.
    public func webSessionURL(redirectTo: String? = nil) async throws -> URL {
        let response: WebSessionResponse = try await authorized(
            try http.json(http.request("POST", "/v1/web-session"), body: WebSessionRequest(redirectTo: redirectTo)))
        guard let url = URL(string: response.url) else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The server sent no usable URL.")
        }
        return url
    }

    /// The URL of Gatehouse's hosted sign-in page (`/oauth/authorize`, the authorization-code flow
    /// with PKCE) for apps that prefer the hosted page to their own forms: open it in a browser. The
    /// page returns to ``Configuration/redirectURL`` with a code; pass that URL to
    /// ``signIn(fromBrowserRedirect:persist:)`` (or ``handle(url:persist:)``).
    ///
    /// - Parameters:
    ///   - prompt: OpenID Connect `prompt` (`login` to ask for the password even in a signed-in
    ///     browser, `select_account`, `consent`).
    ///   - loginHint: an email address to fill in.
    ///   - scopes: the scopes to ask for; `openid` is always asked.
    public func browserSignInURL(
        prompt: String? = nil, loginHint: String? = nil, scopes: [String] = ["profile", "email", "offline_access"]
    )
        async throws -> URL
    {
        let started = try await beginWebSignIn()
        var items = [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: configuration.clientID),
            URLQueryItem(name: "redirect_uri", value: started.redirect),
            URLQueryItem(name: "scope", value: (["openid"] + scopes.filter { $0 != "openid" }).joined(separator: " ")),
            URLQueryItem(name: "state", value: started.state), URLQueryItem(name: "code_challenge", value: started.challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if let prompt { items.append(URLQueryItem(name: "prompt", value: prompt)) }
        if let loginHint { items.append(URLQueryItem(name: "login_hint", value: loginHint)) }
        if let language = Locale.preferredLanguages.first { items.append(URLQueryItem(name: "ui_locales", value: language)) }
        return try serverURL("/oauth/authorize", query: items)
    }

    /// Signs in from the URL the browser returned to after ``browserSignInURL(prompt:loginHint:scopes:)``:
    /// checks `state` and the issuer (`iss`, RFC 9207), turns an `error` into a thrown
    /// ``GatehouseError`` (`access_denied` when the person cancelled) and exchanges the code with the
    /// kept PKCE verifier. ``SignInResult/isNew`` is the server's, as for every sign-in: the hosted
    /// page can create the account (a sign-up form, a first code, a first provider sign-in).
    @discardableResult
    public func signIn(fromBrowserRedirect url: URL, persist: Bool = true) async throws -> SignInResult {
        // The hosted page always names itself (RFC 9207); an answer without `iss` came from elsewhere.
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        guard query.contains(where: { $0.name == "iss" }) else {
            throw GatehouseError(code: .invalidRequest, status: nil, message: "The redirect does not name its issuer.")
        }
        return try await completeWebSignIn(from: url, persist: persist)
    }

    /// The issuer the server names in its redirects: the base URL without a trailing slash.
    var issuer: String {
        let text = configuration.baseURL.absoluteString
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}

#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import AuthenticationServices

    extension AuthClient {
        /// Signs in on Gatehouse's hosted page in the system's web authentication sheet
        /// (`ASWebAuthenticationSession`), returning to ``Configuration/redirectURL`` (its scheme is the
        /// callback scheme). A browser already signed in to Gatehouse signs in without a password.
        @discardableResult
        public func signInWithBrowser(
            presentationContextProvider: any ASWebAuthenticationPresentationContextProviding & Sendable,
            prefersEphemeralSession: Bool = false, prompt: String? = nil, loginHint: String? = nil
        ) async throws -> SignInResult {
            let url = try await browserSignInURL(prompt: prompt, loginHint: loginHint)
            let returned = try await presentWebAuthentication(
                url, presentationContextProvider: presentationContextProvider, prefersEphemeralSession: prefersEphemeralSession)
            return try await signIn(fromBrowserRedirect: returned)
        }
    }
#endif
