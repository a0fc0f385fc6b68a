import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AuthClient {
    /// Verifies the email with the code from the mail and signs in: the step that ends a sign-up that
    /// needed verification, so its ``SignInResult`` is the one that tells whether the account is new.
    @discardableResult
    public func signIn(email: String, verificationCode code: String, persist: Bool = true) async throws -> SignInResult {
        let request = try http.json(
            http.request("POST", "/v1/verify"), body: CodeVerificationRequest(clientId: configuration.clientID, email: email, code: code))
        return try await adopt(try await http.send(request), persist: persist)
    }

    /// Sends the verification mail again. A cool-down applies, started by the sign-up's own mail, so a
    /// resend right after ``signUp(email:password:profile:acceptTerms:persist:)`` is refused
    /// (``GatehouseError/isRateLimited``, with `retryAfter`). Returns when the next resend is allowed.
    @discardableResult
    public func resendVerification(to email: String) async throws -> MailSentResponse {
        try await http.send(
            try await challenged(
                try http.json(
                    http.request("POST", "/v1/verification"),
                    body: VerificationResendRequest(clientId: configuration.clientID, email: email)),
                .codeSend))
    }

    /// Handles a URL the app was opened with, and returns `false` for one that is not Gatehouse's:
    ///
    /// - the redirect back into the app after the mail's link (`redirectURL?code=…`): exchanges the
    ///   code with the PKCE verifier kept from ``signUp(email:password:profile:acceptTerms:persist:)``
    ///   or ``sendMagicLink(email:createUser:acceptTerms:)``
    ///   (in memory, or in the store after a relaunch) and signs in;
    /// - the mail's verification link itself, opened as a universal link (`<baseURL>/verify?token=…`):
    ///   verifies the address and signs in;
    /// - the recovery link (`<baseURL>/reset?token=…`): signs in with a recovery session, so
    ///   ``changePassword(to:current:)`` works without the old password for a few minutes;
    /// - the magic link (`<baseURL>/magic-link?token=…`) opened as a universal link, and the redirect
    ///   its page sends a browser to: signs in with the verifier kept from
    ///   ``sendMagicLink(email:createUser:acceptTerms:)``.
    @discardableResult
    public func handle(url: URL, persist: Bool = true) async throws -> Bool {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        if let state = socialState, query.contains(where: { $0.name == "state" && $0.value == state }) {
            _ = try await completeWebSignIn(from: url, persist: persist)
            return true
        }
        if let redirect = configuration.redirectURL, url.absoluteString.hasPrefix(redirect.absoluteString),
            query.first(where: { $0.name == "error" })?.value == ErrorCode.mfaRequired.rawValue,
            let flow = query.first(where: { $0.name == "flow_id" })?.value
        {
            // The link proved the address; the sign-in it started waits for a second factor.
            let factors = (query.first(where: { $0.name == "factors" })?.value ?? "").split(separator: ",")
            let challenge = SecondFactorChallenge(
                flowID: flow, factors: factors.map { SecondFactorKind(rawValue: String($0)) },
                requiresEnrolment: query.contains { $0.name == "enrol" && $0.value == "true" }, fromVerificationLink: true)
            await emit(.secondFactorRequired(challenge))
            throw GatehouseError(
                code: .mfaRequired, status: nil, message: "The sign-in waits for a second factor.", secondFactor: challenge)
        }
        if let redirect = configuration.redirectURL, url.absoluteString.hasPrefix(redirect.absoluteString),
            let code = query.first(where: { $0.name == "code" })?.value
        {
            try await signIn(authorizationCode: code, persist: persist)
            return true
        }
        guard let token = query.first(where: { $0.name == "token" })?.value, !token.isEmpty,
            url.scheme == configuration.baseURL.scheme, url.host == configuration.baseURL.host,
            url.port == configuration.baseURL.port
        else { return false }
        let base = configuration.baseURL.path.hasSuffix("/") ? String(configuration.baseURL.path.dropLast()) : configuration.baseURL.path
        let route: String
        switch url.path {
        case base + "/magic-link":
            _ = try await completeMagicLink(token: token, persist: persist)
            return true
        case base + "/verify": route = "/v1/verify"
        case base + "/reset": route = "/v1/recovery/verify"
        default: return false
        }
        let request = try http.json(
            http.request("POST", route), body: CodeVerificationRequest(clientId: configuration.clientID, token: token))
        _ = try await adopt(try await http.send(request), persist: persist)
        return true
    }

    /// Signs in with an authorization code (the `code` of the redirect after the mail's link),
    /// exchanged with the PKCE verifier kept from the sign-up: for apps that receive the code some
    /// other way than ``handle(url:persist:)``.
    @discardableResult
    public func signIn(authorizationCode code: String, persist: Bool = true) async throws -> SignInResult {
        try await exchangeForTokens(code: code, persist: persist)
    }

    /// The exchange at the token endpoint, with the sign-up's verifier or the web sign-in's.
    func exchangeForTokens(code: String, persist: Bool, social: Bool = false) async throws -> SignInResult {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("client_id", configuration.clientID)]
        if let redirect = configuration.redirectURL { fields.append(("redirect_uri", redirect.absoluteString)) }
        // After a relaunch the verifier is only in the store.
        let stored = await pendingVerifiers()
        if let verifier = social ? socialVerifier ?? stored.social : pkceVerifier ?? stored.signUp {
            fields.append(("code_verifier", verifier))
        }
        let tokens: TokenResponse = try await http.send(http.form(http.request("POST", "/oauth/token"), fields))
        if social {
            socialVerifier = nil
            try? await updatePendingVerifiers { $0.social = nil }
        } else {
            pkceVerifier = nil
            try? await updatePendingVerifiers { $0.signUp = nil }
        }
        // The token endpoint returns the user (a server before it did not: then ask with the new token).
        let user: User
        if let given = tokens.user {
            user = given
        } else {
            user = try await http.send(http.request("GET", "/v1/me", bearer: tokens.accessToken))
        }
        return try await adopt(tokens, user: user, persist: persist)
    }

    /// Mails a recovery code and a link to the reset page. Answers the same for unknown addresses.
    @discardableResult
    public func requestPasswordReset(email: String) async throws -> MailSentResponse {
        try await check(["email": email], for: .recoverPassword)
        return try await sendRecovery(email: email)
    }

    /// The recovery request, after the app's validator.
    func sendRecovery(email: String) async throws -> MailSentResponse {
        try await http.send(
            try await challenged(
                try http.json(http.request("POST", "/v1/recovery"), body: RecoveryRequest(clientId: configuration.clientID, email: email)),
                .codeSend))
    }

    /// Signs in with the recovery code from the mail of ``requestPasswordReset(email:)``;
    /// ``changePassword(to:current:)`` then works without the old password for a few minutes, which
    /// is the point of a recovery session.
    @discardableResult
    public func signIn(email: String, recoveryCode code: String, persist: Bool = true) async throws -> SignInResult {
        let request = try http.json(
            http.request("POST", "/v1/recovery/verify"),
            body: CodeVerificationRequest(clientId: configuration.clientID, email: email, code: code))
        return try await adopt(try await http.send(request), persist: persist)
    }
}
