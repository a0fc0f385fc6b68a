import Foundation
import GatehouseAPI
import JWTKit

/// RFC 9068 access-token claims plus `sid` and `amr`. NumericDates are whole seconds (`Int`), as OIDC
/// clients expect; jwt-kit's date claims would write fractions.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var sub: String
    /// The issuer (Gatehouse's own API), then the client's resource servers, if it has any.
    public var aud: Audience
    public var exp: Int
    public var iat: Int
    public var jti: String
    public var clientID: String
    public var scope: String
    public var sid: String
    public var amr: [String]
    /// The level the sign-in reached (`1`, or `2` with a second factor) and when it happened (RFC 9068
    /// §2.2.1), so a resource server can ask for more (RFC 9470) without calling back. Absent for a
    /// client's own token.
    public var acr: String?
    public var authTime: Int?
    /// The DPoP key the token is bound to (RFC 9449 §6.1): a resource server takes it only with a proof
    /// by that key.
    public var cnf: Confirmation?
    /// RFC 8693 §4.1: who acts as the subject (an impersonating client, `{"sub": client_id}`).
    public var act: [String: String]?
    /// Claims a token-issue hook added. Written, never read back: a resource server reads them from
    /// the JWT itself, and Gatehouse's own checks use only the registered claims.
    public var extra: [String: JSONValue] = [:]

    /// Names a hook can never set: the registered claims of RFC 7519/9068 and OIDC, and ours.
    public static let reservedNames: Set<String> = [
        "iss", "sub", "aud", "exp", "iat", "nbf", "jti", "client_id", "scope", "sid", "amr", "acr", "auth_time",
        "azp", "nonce", "at_hash", "c_hash", "cnf", "act", "may_act", "typ", "email_verified", "phone_number_verified", "is_anonymous",
    ]

    public init(
        iss: String, sub: String, aud: Audience, exp: Int, iat: Int, jti: String, clientID: String, scope: String,
        sid: String, amr: [String]
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.jti = jti
        self.clientID = clientID
        self.scope = scope
        self.sid = sid
        self.amr = amr
    }

    /// Time-based checks need the injected clock, so they happen in ``AccessTokenVerifier``.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    private enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, jti, scope, sid, amr, acr, cnf, act
        case clientID = "client_id"
        case authTime = "auth_time"
        case isAnonymous = "is_anonymous"
    }

    // By hand so that `aud` is written as a plain string or array in place: a nested custom
    // `Encodable` costs Foundation's JSONEncoder a container of its own, measured at +10 % CPU on the
    // cheapest token routes. (Decoding happens once per token, before the verified-token cache.)
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        sub = try c.decode(String.self, forKey: .sub)
        aud = try c.decode(Audience.self, forKey: .aud)
        exp = try c.decode(Int.self, forKey: .exp)
        iat = try c.decode(Int.self, forKey: .iat)
        jti = try c.decode(String.self, forKey: .jti)
        clientID = try c.decode(String.self, forKey: .clientID)
        scope = try c.decode(String.self, forKey: .scope)
        sid = try c.decode(String.self, forKey: .sid)
        amr = try c.decode([String].self, forKey: .amr)
        acr = try c.decodeIfPresent(String.self, forKey: .acr)
        authTime = try c.decodeIfPresent(Int.self, forKey: .authTime)
        cnf = try c.decodeIfPresent(Confirmation.self, forKey: .cnf)
        act = try c.decodeIfPresent([String: String].self, forKey: .act)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(sub, forKey: .sub)
        if aud.values.count == 1 { try c.encode(aud.values[0], forKey: .aud) } else { try c.encode(aud.values, forKey: .aud) }
        try c.encode(exp, forKey: .exp)
        try c.encode(iat, forKey: .iat)
        try c.encode(jti, forKey: .jti)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(scope, forKey: .scope)
        try c.encode(sid, forKey: .sid)
        try c.encode(amr, forKey: .amr)
        try c.encodeIfPresent(acr, forKey: .acr)
        try c.encodeIfPresent(authTime, forKey: .authTime)
        try c.encodeIfPresent(cnf, forKey: .cnf)
        try c.encodeIfPresent(act, forKey: .act)
        // Follows from how the session began, so every token of an anonymous session says so, and one
        // whose account was upgraded (its sessions' `amr` rewritten) stops saying it.
        if amr.contains(AuthenticationMethod.anonymous) { try c.encode(true, forKey: .isAnonymous) }
        if !extra.isEmpty {
            var more = encoder.container(keyedBy: ClaimName.self)
            for (name, value) in extra where !Self.reservedNames.contains(name) {
                try more.encode(value, forKey: ClaimName(name))
            }
        }
    }

    private struct ClaimName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// OIDC ID-token claims: the standard ones, and the user's claims the scopes release, at the top level.
public struct IDTokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var sub: String
    public var aud: String
    public var exp: Int
    public var iat: Int
    public var authTime: Int
    public var nonce: String?
    public var amr: [String]
    public var sid: String
    /// `1` when the user authenticated for this sign-in, `0` when a browser session's cookie stood in
    /// for it (OIDC Core §2: a long-lived browser cookie is level 0).
    public var acr: String?
    public var atHash: String?
    public var user: UserClaims

    public init(
        iss: String, sub: String, aud: String, exp: Int, iat: Int, authTime: Int, nonce: String?, amr: [String],
        sid: String, acr: String? = nil, atHash: String? = nil, user: UserClaims = UserClaims()
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.authTime = authTime
        self.nonce = nonce
        self.amr = amr
        self.sid = sid
        self.acr = acr
        self.atHash = atHash
        self.user = user
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    private enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, amr, sid, acr
        case authTime = "auth_time"
        case atHash = "at_hash"
        case isAnonymous = "is_anonymous"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        sub = try c.decode(String.self, forKey: .sub)
        aud = try c.decode(String.self, forKey: .aud)
        exp = try c.decode(Int.self, forKey: .exp)
        iat = try c.decode(Int.self, forKey: .iat)
        authTime = try c.decode(Int.self, forKey: .authTime)
        nonce = try c.decodeIfPresent(String.self, forKey: .nonce)
        amr = try c.decode([String].self, forKey: .amr)
        sid = try c.decode(String.self, forKey: .sid)
        acr = try c.decodeIfPresent(String.self, forKey: .acr)
        atHash = try c.decodeIfPresent(String.self, forKey: .atHash)
        user = try UserClaims(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(sub, forKey: .sub)
        try c.encode(aud, forKey: .aud)
        try c.encode(exp, forKey: .exp)
        try c.encode(iat, forKey: .iat)
        try c.encode(authTime, forKey: .authTime)
        try c.encodeIfPresent(nonce, forKey: .nonce)
        try c.encode(amr, forKey: .amr)
        if amr.contains(AuthenticationMethod.anonymous) { try c.encode(true, forKey: .isAnonymous) }
        try c.encode(sid, forKey: .sid)
        try c.encodeIfPresent(acr, forKey: .acr)
        try c.encodeIfPresent(atHash, forKey: .atHash)
        // The same encoder: the user's claims sit beside the standard ones, as OIDC wants them.
        try user.encode(to: encoder)
    }
}
