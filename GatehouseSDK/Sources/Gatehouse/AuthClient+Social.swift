import Crypto
import Foundation

/// A token from a social provider's own SDK, for ``AuthClient/signIn(with:persist:)``.
public enum SocialCredential: Sendable, Hashable {
    /// Sign in with Apple: the identity token, the raw nonce whose SHA-256 the request carried (see
    /// ``SocialNonce``), and the name Apple gives on the first sign-in only.
    case apple(idToken: String, nonce: String, givenName: String? = nil, familyName: String? = nil)
    /// Google Sign-In: the ID token and the raw nonce it was requested with.
    case google(idToken: String, nonce: String)
    /// Any OpenID Connect provider the server's operator configured under `provider`.
    case openID(provider: String, idToken: String, nonce: String)

    var provider: String {
        switch self {
        case .apple: "apple"
        case .google: "google"
        case .openID(let provider, _, _): provider
        }
    }
}

/// What a social sign-in gives: the user and whether this sign-in created the account (Backbeam's
/// `isNew`), so the app can show its first-run screens.
public struct SignInResult: Sendable, Hashable {
    public var user: User
    public var isNew: Bool
}

/// A nonce pair for a provider request: send ``hashed`` (Apple) or ``raw`` (Google, others) to the
/// provider's SDK, and always ``raw`` to Gatehouse, which checks the token carries it and accepts it
/// once.
public struct SocialNonce: Sendable, Hashable {
    public let raw: String
    /// SHA-256 of ``raw``, lowercase hex, as Sign in with Apple's request wants it.
    public let hashed: String

    /// 32 random bytes, base64url.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let raw = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        self.init(raw: raw)
    }

    public init(raw: String) {
        self.raw = raw
        self.hashed = SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension AuthClient {
    /// Signs in (or up) with a token from a social provider's SDK. The server checks the token's
    /// signature, issuer, audience, lifetime and nonce; a provider email that belongs to an existing
    /// account is linked only when both sides proved it, otherwise this throws
    /// `identity_link_required` (sign in to that account first).
    ///
    /// - Returns: the user, and `isNew` when this sign-in created the account.
    @discardableResult
    public func signIn(with credential: SocialCredential, persist: Bool = true) async throws -> SignInResult {
        let body: SocialTokenRequest
        switch credential {
        case .apple(let idToken, let nonce, let givenName, let familyName):
            body = SocialTokenRequest(clientId: configuration.clientID, idToken: idToken, nonce: nonce, givenName: givenName, familyName: familyName)
        case .google(let idToken, let nonce), .openID(_, let idToken, let nonce):
            body = SocialTokenRequest(clientId: configuration.clientID, idToken: idToken, nonce: nonce)
        }
        let path = "/v1/social/" + (credential.provider.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + "/token"
        let tokens: TokenResponse = try await http.send(try http.json(http.request("POST", path), body: body))
        let user = try await adopt(tokens, persist: persist)
        return SignInResult(user: user, isNew: tokens.isNew ?? false)
    }
}
