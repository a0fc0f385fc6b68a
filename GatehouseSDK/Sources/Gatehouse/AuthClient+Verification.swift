import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AuthClient {
    /// Verifies the email with the code from the mail and signs in.
    @discardableResult
    public func verifyEmail(_ email: String, code: String) async throws -> User {
        let request = try http.json(
            http.request("POST", "/v1/verify"), body: CodeVerificationRequest(clientId: configuration.clientID, email: email, code: code))
        return try await adopt(try await http.send(request))
    }

    /// Sends the verification mail again. A cool-down applies, started by the sign-up's own mail, so a
    /// resend right after ``signUp(email:password:profile:acceptTerms:persist:)`` is refused
    /// (``GatehouseError/isRateLimited``, with `retryAfter`). Returns when the next resend is allowed.
    @discardableResult
    public func resendVerification(to email: String) async throws -> MailSentResponse {
        try await http.send(try http.json(
            http.request("POST", "/v1/verification"), body: VerificationResendRequest(clientId: configuration.clientID, email: email)))
    }

    /// Handles the verification deep link: exchanges its code with the PKCE verifier kept from
    /// ``signUp(email:password:profile:acceptTerms:persist:)`` and signs in. Returns `false` for a
    /// URL that is not ours.
    @discardableResult
    public func handle(url: URL) async throws -> Bool {
        guard let redirect = configuration.redirectURL,
            url.absoluteString.hasPrefix(redirect.absoluteString),
            let code = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first(where: { $0.name == "code" })?.value
        else { return false }
        var fields = [("grant_type", "authorization_code"), ("code", code), ("client_id", configuration.clientID),
                      ("redirect_uri", redirect.absoluteString)]
        // After a relaunch the verifier is only in the store.
        let stored = try? await configuration.store.loadPendingVerifier()
        if let verifier = pkceVerifier ?? stored { fields.append(("code_verifier", verifier)) }
        let tokens: TokenResponse = try await http.send(http.form(http.request("POST", "/oauth/token"), fields))
        pkceVerifier = nil
        try? await configuration.store.savePendingVerifier(nil)
        // The token endpoint does not return the user; ask for it with the new token.
        let user: User = try await http.send(http.request("GET", "/v1/me", bearer: tokens.accessToken))
        _ = try await adopt(tokens, user: user)
        return true
    }

    /// Mails a recovery code and a link to the reset page. Answers the same for unknown addresses.
    @discardableResult
    public func requestPasswordReset(email: String) async throws -> MailSentResponse {
        try await http.send(try http.json(
            http.request("POST", "/v1/recovery"), body: RecoveryRequest(clientId: configuration.clientID, email: email)))
    }

    /// Signs in with the recovery code; ``changePassword(to:current:)`` then works without the old
    /// password for a few minutes.
    @discardableResult
    public func verifyPasswordReset(email: String, code: String) async throws -> User {
        let request = try http.json(
            http.request("POST", "/v1/recovery/verify"),
            body: CodeVerificationRequest(clientId: configuration.clientID, email: email, code: code))
        return try await adopt(try await http.send(request))
    }
}
