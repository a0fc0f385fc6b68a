import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request a client may ask a bot challenge for before it is served (the client's `bot_challenge`
/// setting on the server).
public enum BotChallengeAction: String, Sendable, CaseIterable {
    /// ``AuthClient/signUp(email:password:profile:acceptTerms:persist:)``.
    case signUp = "signup"
    /// ``AuthClient/signIn(email:password:scopes:nonce:persist:)``.
    case signIn = "signin"
    /// A code or link sent by mail or text: ``AuthClient/sendCode(to:createUser:)``,
    /// ``AuthClient/resendVerification(to:)``, ``AuthClient/requestPasswordReset(email:)``.
    case codeSend = "code_send"
}

/// Answers a fresh token of the bot challenge widget the server is set up with (Cloudflare
/// Turnstile, hCaptcha or reCAPTCHA) for the request about to be sent, or `nil` to send it without
/// one. Each token is used once: the server refuses one it has seen before.
public typealias BotChallengeProvider = @Sendable (BotChallengeAction) async throws -> String?

extension AuthClient {
    /// `request` with the bot challenge's token in `Gatehouse-Bot-Challenge`, when the app set a
    /// ``Configuration/botChallenge`` provider and it answered one.
    func challenged(_ request: URLRequest, _ action: BotChallengeAction) async throws -> URLRequest {
        guard let provider = configuration.botChallenge, let token = try await provider(action) else { return request }
        var request = request
        request.setValue(token, forHTTPHeaderField: "Gatehouse-Bot-Challenge")
        return request
    }
}
