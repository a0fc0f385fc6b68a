import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AuthClient {
    /// Sends a sign-in mail with a link and a code; either signs in, once.
    ///
    /// The link is bound to this app: the request carries the challenge of a PKCE verifier the SDK
    /// keeps (in memory and in the store, across a relaunch), and only that verifier turns the link
    /// into a session. Opened on this device, the link reaches ``handle(url:persist:)`` either as a
    /// universal link (`<baseURL>/magic-link?token=…`) or, after its page in the browser, as the
    /// redirect to ``Configuration/redirectURL`` with a code. Opened anywhere else it signs nobody in.
    /// The code from the same mail goes to ``signIn(code:for:scopes:nonce:acceptTerms:persist:)`` with ``CodeDestination/email(_:)``.
    ///
    /// The answer is the same whether or not the address has an account; sending again inside the
    /// cool-down is ``GatehouseError/isRateLimited``.
    ///
    /// - Parameters:
    ///   - email: the address to send the mail to.
    ///   - createUser: whether an unknown address gets an account when the link or code is used.
    ///   - acceptTerms: the client's current terms, accepted in the app before asking.
    @discardableResult
    public func sendMagicLink(email: String, createUser: Bool = true, acceptTerms: Bool? = nil) async throws -> OTPSentResponse {
        try await check(["email": email], for: .sendCode)
        // One verifier for every link in the mailbox (the sign-up's verification link too): asking for
        // a magic link never breaks a link still waiting there.
        let stored = await pendingVerifiers()
        let verifier = pkceVerifier ?? stored.signUp ?? PKCE.make().verifier
        pkceVerifier = verifier
        if stored.signUp != verifier { try await updatePendingVerifiers { $0.signUp = verifier } }
        let body = MagicLinkRequest(
            clientId: configuration.clientID, email: email, redirectTo: configuration.redirectURL?.absoluteString,
            codeChallenge: PKCE.challenge(of: verifier), codeChallengeMethod: "S256", createUser: createUser, acceptTerms: acceptTerms)
        return try await http.send(try await challenged(try http.json(http.request("POST", "/v1/magic-link"), body: body), .codeSend))
    }

    /// The magic link opened in the app as a universal link: redeemed with the kept verifier.
    func completeMagicLink(token: String, persist: Bool) async throws -> SignInResult {
        let stored = await pendingVerifiers()
        guard let verifier = pkceVerifier ?? stored.signUp else {
            throw GatehouseError(code: .codeExpired, status: nil, message: "This app did not ask for this sign-in link.")
        }
        let request = try http.json(
            http.request("POST", "/v1/magic-link/verify"),
            body: MagicLinkVerifyRequest(clientId: configuration.clientID, token: token, codeVerifier: verifier))
        let result = try await adopt(try await http.send(request), persist: persist)
        pkceVerifier = nil
        try? await updatePendingVerifiers { $0.signUp = nil }
        return result
    }
}
