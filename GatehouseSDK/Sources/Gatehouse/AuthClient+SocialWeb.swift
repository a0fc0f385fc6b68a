import Foundation
import GatehouseAPI

/// The steps of a web sign-in with a provider, for a progress display.
public enum SocialWebStep: Sendable, Hashable {
    /// The provider's page is about to open at this URL (Gatehouse's start URL).
    case openingProvider(URL)
    /// The browser came back; the one-time code is being exchanged.
    case exchangingCode
    case signedIn(isNew: Bool)
}

extension AuthClient {
    /// The URL that starts a web sign-in with `provider` (any provider the client offers, X and
    /// generic OAuth providers included): open it in a browser or web view. The provider's page
    /// returns to ``Configuration/redirectURL`` with a one-time code; pass that URL to
    /// ``signIn(fromSocialRedirect:persist:)`` (or ``handle(url:persist:)``). The PKCE verifier is kept
    /// in memory and in the store (apart from a sign-up's), so a relaunch in between still completes.
    public func socialSignInURL(provider: String) async throws -> URL {
        let started = try await beginWebSignIn()
        return try serverURL(
            Self.socialPath(provider, "start"),
            query: [
                URLQueryItem(name: "client_id", value: configuration.clientID), URLQueryItem(name: "redirect_to", value: started.redirect),
                URLQueryItem(name: "code_challenge", value: started.challenge), URLQueryItem(name: "code_challenge_method", value: "S256"),
                URLQueryItem(name: "state", value: started.state),
            ])
    }

    /// A new web sign-in (a provider's, or the hosted page's: one at a time, they share the slot): its
    /// PKCE verifier kept in memory and in the store, its state in memory.
    func beginWebSignIn() async throws -> (redirect: String, challenge: String, state: String) {
        guard let redirect = configuration.redirectURL else {
            throw GatehouseError(
                code: .invalidRequest, status: nil, message: "Set Configuration.redirectURL to a redirect URI registered for the client.")
        }
        let pkce = PKCE.make()
        let state = PKCE.make().verifier
        socialVerifier = pkce.verifier
        socialState = state
        try await updatePendingVerifiers { $0.social = pkce.verifier }
        return (redirect.absoluteString, pkce.challenge, state)
    }

    /// `path` on the server (under the base URL's own path) with `query`.
    func serverURL(_ path: String, query: [URLQueryItem]) throws -> URL {
        var components = URLComponents(url: configuration.baseURL, resolvingAgainstBaseURL: false)
        let base = components?.path.hasSuffix("/") == true ? String(components!.path.dropLast()) : components?.path ?? ""
        components?.path = base + path
        components?.queryItems = query
        components?.encodePlusForForms()
        guard let url = components?.url else {
            throw GatehouseError(code: .invalidRequest, status: nil, message: "Cannot build the URL for \(path).")
        }
        return url
    }

    /// Signs in from the URL the browser returned to after ``socialSignInURL(provider:)``: checks
    /// `state`, turns an `error` into a thrown ``GatehouseError`` (`access_denied` when the person
    /// cancelled, `identity_link_required`, …) and exchanges the code with the kept PKCE verifier.
    @discardableResult
    public func signIn(fromSocialRedirect url: URL, persist: Bool = true) async throws -> SignInResult {
        try await completeWebSignIn(from: url, persist: persist)
    }

    /// The return from either web sign-in (a provider's or the hosted page's: they share the slot).
    func completeWebSignIn(from url: URL, persist: Bool) async throws -> SignInResult {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        // A redirect this client did not start (or a second use of one) is refused before anything else.
        // After a relaunch the state is gone with the memory; the PKCE verifier kept in the store still
        // binds the code to this app (RFC 9700 §2.1.1), so the sign-in can complete.
        let started = socialState != nil
        if let expected = socialState {
            guard value("state") == expected else {
                throw GatehouseError(code: .invalidRequest, status: nil, message: "This sign-in was not started here, or already finished.")
            }
        } else if socialVerifier == nil, await pendingVerifiers().social == nil {
            throw GatehouseError(code: .invalidRequest, status: nil, message: "No sign-in was started here.")
        }
        socialState = nil
        // RFC 9207: a redirect that names another issuer came from another server (a mix-up attack).
        if let iss = value("iss"), iss != issuer {
            throw GatehouseError(code: .invalidRequest, status: nil, message: "The redirect names another issuer.")
        }
        if let error = value("error") {
            // A sign-in waiting for its second factor keeps its verifier: the code that completes it
            // is exchanged with it.
            if error == ErrorCode.mfaRequired.rawValue, let flow = value("flow_id") {
                let challenge = SecondFactorChallenge(flowID: flow, factors: [])
                await emit(.secondFactorRequired(challenge))
                throw GatehouseError(
                    code: .mfaRequired, status: nil, message: "The sign-in waits for a second factor.", secondFactor: challenge)
            }
            // Only an answer to this run's own state ends it: a forged error link after a relaunch
            // must not throw away the verifier a real answer still needs.
            if started {
                socialVerifier = nil
                try? await updatePendingVerifiers { $0.social = nil }
            }
            throw GatehouseError(code: ErrorCode(rawValue: error), status: nil, message: "The sign-in did not complete (\(error)).")
        }
        guard let code = value("code") else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The redirect carries no code.")
        }
        return try await exchangeForTokens(code: code, persist: persist, social: true)
    }
}

#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import AuthenticationServices

    extension AuthClient {
        /// Signs in with `provider` in the system's web authentication sheet
        /// (`ASWebAuthenticationSession`), returning to ``Configuration/redirectURL`` (its scheme is the
        /// callback scheme). `progress` reports each step.
        @discardableResult
        public func signInWithProvider(
            _ provider: String, presentationContextProvider: any ASWebAuthenticationPresentationContextProviding & Sendable,
            prefersEphemeralSession: Bool = false, progress: (@Sendable (SocialWebStep) -> Void)? = nil
        ) async throws -> SignInResult {
            let url = try await socialSignInURL(provider: provider)
            progress?(.openingProvider(url))
            let returned = try await presentWebAuthentication(
                url, presentationContextProvider: presentationContextProvider, prefersEphemeralSession: prefersEphemeralSession)
            progress?(.exchangingCode)
            let result = try await signIn(fromSocialRedirect: returned)
            progress?(.signedIn(isNew: result.isNew))
            return result
        }
    }
    extension AuthClient {
        /// Shows `url` in the system's web authentication sheet until it returns to the redirect scheme.
        func presentWebAuthentication(
            _ url: URL, presentationContextProvider: any ASWebAuthenticationPresentationContextProviding & Sendable,
            prefersEphemeralSession: Bool
        ) async throws -> URL {
            guard let scheme = configuration.redirectURL?.scheme else {
                throw GatehouseError(code: .invalidRequest, status: nil, message: "Set Configuration.redirectURL.")
            }
            return try await withCheckedThrowingContinuation { continuation in
                Task { @MainActor in
                    // The session must be kept alive while it is shown; the box holds it until its completion.
                    let keeper = SessionKeeper()
                    let session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme) { callback, error in
                        keeper.session = nil
                        if let callback {
                            continuation.resume(returning: callback)
                        } else {
                            continuation.resume(
                                throwing: GatehouseError(
                                    code: .accessDenied, status: nil, message: error.map { "\($0)" } ?? "The sign-in was cancelled."))
                        }
                    }
                    keeper.session = session
                    session.presentationContextProvider = presentationContextProvider
                    session.prefersEphemeralWebBrowserSession = prefersEphemeralSession
                    if !session.start() {
                        keeper.session = nil
                        continuation.resume(
                            throwing: GatehouseError(code: .invalidRequest, status: nil, message: "The sign-in sheet could not open."))
                    }
                }
            }
        }
    }

    /// Holds an `ASWebAuthenticationSession` while it is shown (the framework does not).
    /// `@unchecked Sendable`: written once on the main actor before `start()` and cleared once in the
    /// completion handler, which the framework calls once after the sheet is gone; nothing else reads it.
    private final class SessionKeeper: @unchecked Sendable {
        var session: ASWebAuthenticationSession?
    }
#endif
