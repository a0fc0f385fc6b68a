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
        case iss, sub, aud, exp, iat, jti, scope, sid, amr
        case clientID = "client_id"
    }
}

/// OIDC ID-token claims.
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
    public var email: String?
    public var emailVerified: Bool?

    public init(
        iss: String, sub: String, aud: String, exp: Int, iat: Int, authTime: Int, nonce: String?, amr: [String],
        sid: String, email: String?, emailVerified: Bool?
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
        self.email = email
        self.emailVerified = emailVerified
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    private enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, amr, sid, email
        case authTime = "auth_time"
        case emailVerified = "email_verified"
    }
}
