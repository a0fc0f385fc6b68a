import Foundation

/// The answer of every call that signs a user in.
public struct TokenResponse: Codable, Hashable, Sendable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int
    public var refreshToken: String?
    public var scope: String?
    public var idToken: String?
    public var user: User?
    public var isNew: Bool?
    /// The recovery codes of a factor enrolled during this sign-in (the user's first), shown once.
    public var recoveryCodes: [String]?
    /// RFC 8693 §2.2.1: what a token exchange issued (`urn:ietf:params:oauth:token-type:access_token`).
    public var issuedTokenType: String?

    public init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Int, refreshToken: String?, scope: String?,
        idToken: String? = nil, user: User? = nil, isNew: Bool? = nil, recoveryCodes: [String]? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
        self.user = user
        self.isNew = isNew
        self.recoveryCodes = recoveryCodes
    }

    private enum CodingKeys: String, CodingKey {
        case scope, user
        case recoveryCodes = "recovery_codes"
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case isNew = "is_new"
        case issuedTokenType = "issued_token_type"
    }
}

/// `POST /v1/signup` when the email must be verified first.
public struct SignupPendingResponse: Codable, Hashable, Sendable {
    public var user: User
    public var verificationRequired: Bool

    public init(user: User, verificationRequired: Bool = true) {
        self.user = user
        self.verificationRequired = verificationRequired
    }

    private enum CodingKeys: String, CodingKey {
        case user
        case verificationRequired = "verification_required"
    }
}

/// One of the user's sessions, as `GET /v1/me/sessions` lists it.
public struct SessionInfo: Codable, Hashable, Sendable {
    public var id: UUID
    public var clientId: String
    public var createdAt: Date
    public var lastUsedAt: Date
    public var expiresAt: Date
    public var amr: [String]
    public var scopes: [String]
    public var userAgent: String?
    /// `true` for the session the listing request was made with.
    public var current: Bool
    /// The device authenticator the session was started with, if any.
    public var authenticator: SessionAuthenticator?

    public init(
        id: UUID, clientId: String, createdAt: Date, lastUsedAt: Date, expiresAt: Date, amr: [String],
        scopes: [String], userAgent: String?, current: Bool, authenticator: SessionAuthenticator? = nil
    ) {
        self.id = id
        self.clientId = clientId
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.amr = amr
        self.scopes = scopes
        self.userAgent = userAgent
        self.current = current
        self.authenticator = authenticator
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)  // the contract's lowercase form
        try c.encode(clientId, forKey: .clientId)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(lastUsedAt, forKey: .lastUsedAt)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encode(amr, forKey: .amr)
        try c.encode(scopes, forKey: .scopes)
        try c.encodeIfPresent(userAgent, forKey: .userAgent)
        try c.encode(current, forKey: .current)
        try c.encodeIfPresent(authenticator, forKey: .authenticator)
    }

    private enum CodingKeys: String, CodingKey {
        case id, amr, scopes, current, authenticator
        case clientId = "client_id"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case expiresAt = "expires_at"
        case userAgent = "user_agent"
    }
}

/// `GET /v1/me/sessions`.
public struct SessionList: Codable, Hashable, Sendable {
    public var sessions: [SessionInfo]
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

/// RFC 7662 introspection answer.
public struct IntrospectionResponse: Codable, Hashable, Sendable {
    public var active: Bool
    public var scope: String?
    public var clientId: String?
    public var sub: String?
    public var exp: Int?
    public var iat: Int?
    public var iss: String?
    public var aud: Audience?
    public var jti: String?
    public var sid: String?
    public var tokenType: String?
    /// RFC 9449 §6.2: the thumbprint of the key a DPoP-bound token is bound to (`{"jkt": …}`).
    public var cnf: Confirmation?
    /// RFC 8693 §4.1: the client acting as the subject, for an impersonation token.
    public var act: [String: String]?

    public init(active: Bool) { self.active = active }

    private enum CodingKeys: String, CodingKey {
        case active, scope, sub, exp, iat, iss, aud, jti, sid, cnf, act
        case clientId = "client_id"
        case tokenType = "token_type"
    }

    // `aud` in place as a string or an array: a nested custom `Encodable` costs Foundation's encoder
    // a container of its own on a route answered thousands of times a second.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(active, forKey: .active)
        try c.encodeIfPresent(scope, forKey: .scope)
        try c.encodeIfPresent(clientId, forKey: .clientId)
        try c.encodeIfPresent(sub, forKey: .sub)
        try c.encodeIfPresent(exp, forKey: .exp)
        try c.encodeIfPresent(iat, forKey: .iat)
        try c.encodeIfPresent(iss, forKey: .iss)
        if let aud {
            if aud.values.count == 1 { try c.encode(aud.values[0], forKey: .aud) } else { try c.encode(aud.values, forKey: .aud) }
        }
        try c.encodeIfPresent(jti, forKey: .jti)
        try c.encodeIfPresent(sid, forKey: .sid)
        try c.encodeIfPresent(tokenType, forKey: .tokenType)
        try c.encodeIfPresent(cnf, forKey: .cnf)
        try c.encodeIfPresent(act, forKey: .act)
    }
}

/// RFC 7800 `cnf`: what a token is bound to. Gatehouse binds tokens to a DPoP key (RFC 9449 §6.1), by
/// its JWK SHA-256 thumbprint (RFC 7638).
public struct Confirmation: Codable, Hashable, Sendable {
    public var jkt: String

    public init(jkt: String) { self.jkt = jkt }
}

/// RFC 8628 §3.2: the answer of `POST /oauth/device_authorization`.
public struct DeviceAuthorizationResponse: Codable, Hashable, Sendable {
    /// What the device polls the token endpoint with; never shown.
    public var deviceCode: String
    /// What the person types on ``verificationURI`` (`BCDF-GHJK`).
    public var userCode: String
    public var verificationURI: String
    /// ``verificationURI`` with the code filled in, for a QR code.
    public var verificationURIComplete: String?
    public var expiresIn: Int
    /// Seconds between polls.
    public var interval: Int?

    public init(
        deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String?, expiresIn: Int, interval: Int?
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    private enum CodingKeys: String, CodingKey {
        case interval
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
    }
}
