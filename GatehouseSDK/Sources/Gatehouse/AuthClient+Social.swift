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
    /// Facebook Login: the user access token. The server proves it was issued to the operator's
    /// Facebook app (`debug_token`) before it trusts it.
    case facebook(accessToken: String)
    /// Facebook Limited Login: the authentication token (an ID token) and its nonce.
    case facebookLimited(idToken: String, nonce: String)
    /// GitHub: a user access token of the operator's OAuth app (checked with GitHub's token API).
    case github(accessToken: String)
    /// Sign In with LinkedIn using OpenID Connect: the ID token and its nonce.
    case linkedIn(idToken: String, nonce: String)
    /// An access token of a provider the operator configured with an introspection endpoint.
    /// X has none: use ``AuthClient/socialSignInURL(provider:)`` for X.
    case accessToken(provider: String, accessToken: String)

    /// The provider's name on the server (its providers file may rename presets; use
    /// ``openID(provider:idToken:nonce:)`` or ``accessToken(provider:accessToken:)`` then).
    public var provider: String {
        switch self {
        case .apple: "apple"
        case .google: "google"
        case .facebook, .facebookLimited: "facebook"
        case .github: "github"
        case .linkedIn: "linkedin"
        case .openID(let provider, _, _), .accessToken(let provider, _): provider
        }
    }

    /// The ID token and nonce, or the access token, as the server takes them.
    var parts: (idToken: String?, nonce: String?, accessToken: String?) {
        switch self {
        case .apple(let idToken, let nonce, _, _), .google(let idToken, let nonce), .openID(_, let idToken, let nonce),
            .facebookLimited(let idToken, let nonce), .linkedIn(let idToken, let nonce):
            (idToken, nonce, nil)
        case .facebook(let token), .github(let token), .accessToken(_, let token):
            (nil, nil, token)
        }
    }
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
    /// - Returns: the user, the session, and ``SignInResult/isNew`` when this sign-in created the account.
    @discardableResult
    public func signIn(with credential: SocialCredential, persist: Bool = true) async throws -> SignInResult {
        var body: SocialTokenRequest
        let parts = credential.parts
        if let idToken = parts.idToken, let nonce = parts.nonce {
            body = SocialTokenRequest(clientId: configuration.clientID, idToken: idToken, nonce: nonce)
        } else {
            body = SocialTokenRequest(clientId: configuration.clientID, accessToken: parts.accessToken ?? "")
        }
        if case .apple(_, _, let givenName, let familyName) = credential {
            body.givenName = givenName
            body.familyName = familyName
        }
        let tokens: TokenResponse = try await http.send(
            try http.json(http.request("POST", Self.socialPath(credential.provider, "token")), body: body))
        return try await adopt(tokens, persist: persist)
    }

    /// The provider identities linked to the signed-in user.
    public func identities() async throws -> [LinkedIdentity] {
        let list: IdentityList = try await authorized(http.request("GET", "/v1/me/identities"))
        return list.identities
    }

    /// Links the provider account `credential` proves to the signed-in user, so either signs in.
    /// Throws `identity_in_use` when that provider account belongs to another user, and
    /// `reauthentication_required` when the session's sign-in is older than 15 minutes (sign in
    /// again, then link). Linking the same account twice changes nothing.
    @discardableResult
    public func linkIdentity(_ credential: SocialCredential) async throws -> LinkedIdentity {
        let parts = credential.parts
        let body = IdentityLinkRequest(
            provider: credential.provider, idToken: parts.idToken, accessToken: parts.accessToken, nonce: parts.nonce)
        return try await authorized(try http.json(http.request("POST", "/v1/me/identities"), body: body))
    }

    /// Unlinks a provider identity. Throws `last_sign_in_method` when nothing else (a password,
    /// another provider) would sign the user in.
    public func unlinkIdentity(_ id: String) async throws {
        try await authorized(http.request("DELETE", "/v1/me/identities/" + Self.pathSegment(id)))
    }

    static func socialPath(_ provider: String, _ last: String) -> String {
        "/v1/social/" + pathSegment(provider) + "/" + last
    }

    /// One path segment, percent-encoded where RFC 3986 requires (`-` and `.` stay: ids and provider
    /// names use them).
    static func pathSegment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
