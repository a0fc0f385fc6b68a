import Crypto
import Foundation
import GatehouseAPI
import JWTKit

/// Calls to a provider's own API: proving that a native app's access token was issued to the
/// operator's app, reading the profile a token names, and the web flow's code exchange.
///
/// A token that fails a check throws ``IDTokenError`` (the app's fault, answered 401); a provider
/// that cannot be reached or answers out of its contract throws ``ProviderCallError`` (answered 503).
struct ProviderAPI: Sendable {
    let http: any FederationHTTP

    // MARK: Native access tokens

    /// An access token a native SDK gave the app. Trusting a token before proving whose app it was
    /// issued to would let any other app at the provider sign its users in here (token substitution).
    func verifyAccessToken(_ token: String, provider: SocialProvider, userinfoURL: String? = nil) async throws -> FederatedClaims {
        guard token.utf8.count <= 4096, !token.isEmpty else { throw IDTokenError.malformed }
        guard provider.acceptsNativeAccessTokens, let secret = provider.clientSecret else { throw IDTokenError.notProvable }
        switch provider.kind {
        case .facebook:
            let appID = try await facebookTokenApp(token, provider: provider, secret: secret)
            return try await facebookProfile(token, provider: provider, proofSecret: appID == provider.webClientID ? secret : nil)
        case .github:
            try await githubTokenCheck(token, provider: provider, secret: secret)
            return try await githubProfile(token, provider: provider)
        case .linkedin, .oidc, .oauth2:
            try await introspect(token, provider: provider, secret: secret)
            return try await userinfo(token, provider: provider, url: userinfoURL ?? provider.endpoints.userinfo)
        case .apple, .google, .x:
            throw IDTokenError.notProvable
        }
    }

    /// Facebook's `debug_token`, asked with the app's own token (`app-id|app-secret`): the token's
    /// `app_id` must be one of the operator's apps.
    private func facebookTokenApp(_ token: String, provider: SocialProvider, secret: String) async throws -> String {
        struct Answer: Decodable {
            struct Inner: Decodable {
                var app_id: String?
                var is_valid: Bool?
                var user_id: String?
            }
            var data: Inner
        }
        let url = try api(provider, "/debug_token", query: [("input_token", token), ("access_token", provider.webClientID + "|" + secret)])
        let (status, body) = try await http.send(FederationRequest(url: url))
        guard status == 200 else { throw ProviderCallError.status(status) }
        let answer = try decode(Answer.self, body)
        guard answer.data.is_valid == true, answer.data.user_id?.isEmpty == false else { throw IDTokenError.inactive }
        guard let app = answer.data.app_id, provider.clientIDs.contains(app) else { throw IDTokenError.notIssuedToApp }
        return app
    }

    /// GitHub's token check for an OAuth app (`POST /applications/{client_id}/token`): 200 only for a
    /// token of that app, 404 for any other.
    private func githubTokenCheck(_ token: String, provider: SocialProvider, secret: String) async throws {
        let url = try api(provider, "/applications/" + FormEncoding.escape(provider.webClientID) + "/token")
        let body = try JSONSerialization.data(withJSONObject: ["access_token": token])
        let request = FederationRequest(
            method: "POST", url: url,
            headers: [("Authorization", basic(provider.webClientID, secret)), ("Content-Type", "application/json")] + githubHeaders,
            body: body)
        let (status, _) = try await http.send(request)
        switch status {
        case 200: return
        case 404, 422: throw IDTokenError.notIssuedToApp
        default: throw ProviderCallError.status(status)
        }
    }

    /// RFC 7662 introspection by the operator's app: the token must be active and issued to one of
    /// the operator's app ids (an answer without `client_id` proves nothing and is refused).
    private func introspect(_ token: String, provider: SocialProvider, secret: String) async throws {
        struct Answer: Decodable {
            var active: Bool
            var client_id: String?
        }
        guard let url = provider.endpoints.introspection else { throw IDTokenError.notProvable }
        let request = FederationRequest.form(
            url, [("token", token), ("client_id", provider.webClientID), ("client_secret", secret)])
        let (status, body) = try await http.send(request)
        guard status == 200 else { throw ProviderCallError.status(status) }
        let answer = try decode(Answer.self, body)
        guard answer.active else { throw IDTokenError.inactive }
        guard let client = answer.client_id, provider.clientIDs.contains(client) else { throw IDTokenError.notIssuedToApp }
    }

    // MARK: Profiles

    /// Who a token Gatehouse obtained itself (web flow) names.
    func profile(accessToken: String, provider: SocialProvider, userinfoURL: String?) async throws -> FederatedClaims {
        switch provider.kind {
        case .facebook: try await facebookProfile(accessToken, provider: provider, proofSecret: provider.clientSecret)
        case .github: try await githubProfile(accessToken, provider: provider)
        case .x: try await xProfile(accessToken, provider: provider)
        default: try await userinfo(accessToken, provider: provider, url: userinfoURL ?? provider.endpoints.userinfo)
        }
    }

    /// Facebook gives an email only when the person has one and granted it; whether Facebook checked
    /// it is not stated, so it is never taken as verified (no automatic linking by it).
    private func facebookProfile(_ token: String, provider: SocialProvider, proofSecret: String?) async throws -> FederatedClaims {
        var query = [("fields", "id,name,email,first_name,last_name"), ("access_token", token)]
        if let proofSecret {
            // appsecret_proof: Facebook refuses calls without it when the app requires it.
            let mac = HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: Data(proofSecret.utf8)))
            query.append(("appsecret_proof", mac.map { String(format: "%02x", $0) }.joined()))
        }
        let object = try await getJSON(try api(provider, "/me", query: query), headers: [])
        guard let id = Self.string(object["id"]) else { throw ProviderCallError.malformed("no id") }
        return FederatedClaims(
            subject: id, email: Self.string(object["email"]), emailVerified: false, givenName: Self.string(object["first_name"]),
            familyName: Self.string(object["last_name"]), name: Self.string(object["name"]), profile: Self.profile(object, provider))
    }

    private var githubHeaders: [(String, String)] {
        [("Accept", "application/vnd.github+json"), ("User-Agent", "Gatehouse"), ("X-GitHub-Api-Version", "2022-11-28")]
    }

    /// GitHub's numeric user id is the subject (a login can be renamed); the email is the primary
    /// one from `/user/emails` with GitHub's own `verified` flag.
    private func githubProfile(_ token: String, provider: SocialProvider) async throws -> FederatedClaims {
        let headers = [("Authorization", "Bearer " + token)] + githubHeaders
        let user = try await getJSON(try api(provider, "/user"), headers: headers)
        guard let id = Self.string(user["id"]) else { throw ProviderCallError.malformed("no id") }
        var email = Self.string(user["email"])
        var verified = false
        let (status, body) = try await http.send(FederationRequest(url: try api(provider, "/user/emails"), headers: headers))
        if status == 200, let list = try? JSONSerialization.jsonObject(with: body) as? [[String: Any]],
            let primary = list.first(where: { $0["primary"] as? Bool == true })
        {
            email = Self.string(primary["email"])
            verified = primary["verified"] as? Bool == true
        }
        return FederatedClaims(
            subject: id, email: email, emailVerified: verified, givenName: nil, familyName: nil,
            name: Self.string(user["name"]) ?? Self.string(user["login"]), profile: Self.profile(user, provider))
    }

    /// X's user id; `confirmed_email` only with the `users.email` scope, and then X confirmed it.
    private func xProfile(_ token: String, provider: SocialProvider) async throws -> FederatedClaims {
        // The field needs the users.email scope; asking for it without the scope is not X's contract.
        let query = provider.scopes.contains("users.email") ? [("user.fields", "confirmed_email")] : []
        let object = try await getJSON(try api(provider, "/2/users/me", query: query), headers: [("Authorization", "Bearer " + token)])
        guard let data = object["data"] as? [String: Any], let id = Self.string(data["id"]) else {
            throw ProviderCallError.malformed("no data.id")
        }
        let email = Self.string(data["confirmed_email"])
        return FederatedClaims(
            subject: id, email: email, emailVerified: email != nil, givenName: nil, familyName: nil,
            name: Self.string(data["name"]) ?? Self.string(data["username"]), profile: Self.profile(data, provider))
    }

    /// An OpenID userinfo endpoint or a generic OAuth provider's profile URL, read through the
    /// operator's claim map.
    private func userinfo(_ token: String, provider: SocialProvider, url: String?) async throws -> FederatedClaims {
        guard let url else { throw IDTokenError.providerMisconfigured }
        let object = try await getJSON(url, headers: [("Authorization", "Bearer " + token), ("Accept", "application/json")])
        let map = provider.claimMap
        guard let subject = Self.string(Self.lookup(map.subject, in: object)), subject.count <= 255 else {
            throw ProviderCallError.malformed("no \(map.subject)")
        }
        let verified = Self.lookup(map.emailVerified, in: object)
        return FederatedClaims(
            subject: subject, email: Self.string(Self.lookup(map.email, in: object)),
            emailVerified: verified as? Bool == true || verified as? String == "true",
            givenName: Self.string(Self.lookup(map.givenName, in: object)),
            familyName: Self.string(Self.lookup(map.familyName, in: object)),
            name: Self.string(Self.lookup(map.name, in: object)), profile: Self.profile(object, provider))
    }

    // MARK: Web flow

    struct Tokens: Sendable {
        var accessToken: String?
        var idToken: String?
        var refreshToken: String?
        /// Seconds from the answer.
        var expiresIn: TimeInterval?
        var scope: String?
        var tokenType: String?
    }

    /// The authorization code from the callback, exchanged at the provider's token endpoint with the
    /// operator's secret (and Gatehouse's PKCE verifier where the provider takes one).
    func exchange(
        code: String, redirectURI: String, verifier: String?, provider: SocialProvider, tokenURL: String, now: Date
    ) async throws
        -> Tokens
    {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]
        if let verifier { fields.append(("code_verifier", verifier)) }
        let tokens = try await tokenEndpoint(fields, provider: provider, tokenURL: tokenURL, now: now)
        guard tokens.accessToken != nil || tokens.idToken != nil else { throw ProviderCallError.malformed("no token") }
        return tokens
    }

    /// RFC 6749 §6: a new access token for a kept refresh token. A refused refresh token (revoked by
    /// the person, expired, already rotated) throws ``IDTokenError/codeRefused``.
    func refresh(_ refreshToken: String, provider: SocialProvider, tokenURL: String, now: Date) async throws -> Tokens {
        // Only invalid_grant says the refresh token is dead; a malformed request is ours, not a revocation.
        let tokens = try await tokenEndpoint(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], provider: provider, tokenURL: tokenURL, now: now,
            refusals: ["invalid_grant"])
        guard tokens.accessToken != nil else { throw ProviderCallError.malformed("no access token") }
        return tokens
    }

    /// A token endpoint call with the operator's client authentication, as each provider takes it.
    private func tokenEndpoint(
        _ grant: [(String, String)], provider: SocialProvider, tokenURL: String, now: Date,
        refusals: Set<String> = ["invalid_grant", "bad_verification_code", "invalid_request"]
    ) async throws -> Tokens {
        var fields = grant
        var headers: [(String, String)] = []
        let secret = try await clientSecret(provider, now: now)
        switch provider.kind {
        case .x, .oidc, .oauth2:
            // client_secret_basic: what OpenID Connect assumes when nothing else is registered, and X's rule.
            fields.append(("client_id", provider.webClientID))
            if let secret { headers.append(("Authorization", basic(provider.webClientID, secret))) }
        default:
            fields.append(("client_id", provider.webClientID))
            if let secret { fields.append(("client_secret", secret)) }
        }
        if provider.kind == .github { headers.append(("User-Agent", "Gatehouse")) }
        let (status, body) = try await http.send(FederationRequest.form(tokenURL, fields, headers: headers))
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if status != 200 || object["error"] != nil {
            // A refused code or refresh token (replayed, expired, for another redirect) is the caller's;
            // a refused client (wrong secret, a bad Apple client-secret JWT), throttling or an outage is
            // the operator's or the provider's, and must not look like the user's fault.
            let error = object["error"] as? String
            if (status == 400 || status == 200), refusals.contains(error ?? "") {
                throw IDTokenError.codeRefused
            }
            throw ProviderCallError.status(status)
        }
        let lifetime: TimeInterval? =
            switch object["expires_in"] {
            case let number as Int: number > 0 ? TimeInterval(number) : nil
            case let number as Double: number > 0 ? number : nil
            case let text as String: TimeInterval(text).flatMap { $0 > 0 ? $0 : nil }
            default: nil
            }
        return Tokens(
            accessToken: Self.string(object["access_token"]), idToken: Self.string(object["id_token"]),
            refreshToken: Self.string(object["refresh_token"]), expiresIn: lifetime, scope: Self.string(object["scope"]),
            tokenType: Self.string(object["token_type"]))
    }

    /// Apple's client secret is an ES256 JWT signed with the team's key, valid a few minutes.
    private func clientSecret(_ provider: SocialProvider, now: Date) async throws -> String? {
        guard let key = provider.appleKey else { return provider.clientSecret }
        struct Claims: JWTPayload {
            var iss: String
            var iat: Int
            var exp: Int
            var aud: String
            var sub: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: key.privateKeyPEM), kid: JWKIdentifier(string: key.keyID))
        let issued = Int(now.timeIntervalSince1970)
        return try await keys.sign(
            Claims(
                iss: key.teamID, iat: issued, exp: issued + 300, aud: provider.issuers.first ?? "https://appleid.apple.com",
                sub: provider.webClientID),
            kid: JWKIdentifier(string: key.keyID))
    }

    // MARK: Plumbing

    private func api(_ provider: SocialProvider, _ path: String, query: [(String, String)] = []) throws -> String {
        guard let base = provider.endpoints.api else { throw IDTokenError.providerMisconfigured }
        return base.trimmingSuffix("/") + path + (query.isEmpty ? "" : "?" + FormEncoding.encode(query))
    }

    private func getJSON(_ url: String, headers: [(String, String)]) async throws -> [String: Any] {
        let (status, body) = try await http.send(FederationRequest(url: url, headers: headers))
        // The token was proved ours a moment ago (or just issued to us): a 401 now means it was
        // revoked in between, the app's problem; anything else is the provider's.
        if status == 401 || status == 400 { throw IDTokenError.inactive }
        guard status == 200 else { throw ProviderCallError.status(status) }
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw ProviderCallError.malformed("not an object")
        }
        return object
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw ProviderCallError.malformed("\(T.self)")
        }
    }

    /// RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined and base64-encoded.
    private func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data((FormEncoding.escape(id) + ":" + FormEncoding.escape(secret)).utf8).base64EncodedString()
    }

    /// The provider's answer about the person, kept as it came when the operator asked for it; one
    /// larger than 16 KiB is not kept (no one's profile is that large; a hostile provider's could be).
    static func profile(_ object: [String: Any], _ provider: SocialProvider) -> [String: JSONValue]? {
        guard provider.keepProfile, let data = try? JSONSerialization.data(withJSONObject: object), data.count <= 16 * 1024 else {
            return nil
        }
        return try? JSONDecoder().decode([String: JSONValue].self, from: data)
    }

    static func string(_ value: Any?) -> String? {
        switch value {
        case let text as String: text.isEmpty ? nil : text
        case let number as Int: String(number)
        case let number as Double where number == number.rounded(): String(Int64(number))
        default: nil
        }
    }

    static func lookup(_ path: String, in object: [String: Any]) -> Any? {
        var current: Any? = object
        for part in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(part)]
        }
        return current
    }
}
