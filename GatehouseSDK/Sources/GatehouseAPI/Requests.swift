/// `POST /v1/signup`.
public struct SignupRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String
    public var password: String
    public var profile: Profile?
    public var acceptTerms: Bool?
    public var redirectTo: String?
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    /// A username for the account, on a client that uses them (`usernames=optional|required`).
    public var username: String?

    public init(
        clientId: String? = nil, email: String, password: String, profile: Profile? = nil, acceptTerms: Bool? = nil,
        redirectTo: String? = nil, codeChallenge: String? = nil, codeChallengeMethod: String? = nil, username: String? = nil
    ) {
        self.username = username
        self.clientId = clientId
        self.email = email
        self.password = password
        self.profile = profile
        self.acceptTerms = acceptTerms
        self.redirectTo = redirectTo
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
    }

    private enum CodingKeys: String, CodingKey {
        case email, password, profile, username
        case clientId = "client_id"
        case acceptTerms = "accept_terms"
        case redirectTo = "redirect_to"
        case codeChallenge = "code_challenge"
        case codeChallengeMethod = "code_challenge_method"
    }
}

/// `POST /v1/login`.
public struct LoginRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String
    public var password: String
    public var scope: String?
    /// Echoed in the ID token when `openid` is granted.
    public var nonce: String?
    /// Signs in by username instead of `email` (which is then empty and not sent).
    public var username: String?

    public init(clientId: String? = nil, email: String, password: String, scope: String? = nil, nonce: String? = nil) {
        self.clientId = clientId
        self.email = email
        self.password = password
        self.scope = scope
        self.nonce = nonce
    }

    /// A sign-in by username.
    public init(clientId: String? = nil, username: String, password: String, scope: String? = nil, nonce: String? = nil) {
        self.init(clientId: clientId, email: "", password: password, scope: scope, nonce: nonce)
        self.username = username
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clientId = try c.decodeIfPresent(String.self, forKey: .clientId)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        // One of the two names the account; `email` stays required when there is no username.
        email = username == nil ? try c.decode(String.self, forKey: .email) : try c.decodeIfPresent(String.self, forKey: .email) ?? ""
        password = try c.decode(String.self, forKey: .password)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        nonce = try c.decodeIfPresent(String.self, forKey: .nonce)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(clientId, forKey: .clientId)
        if username == nil || !email.isEmpty { try c.encode(email, forKey: .email) }
        try c.encodeIfPresent(username, forKey: .username)
        try c.encode(password, forKey: .password)
        try c.encodeIfPresent(scope, forKey: .scope)
        try c.encodeIfPresent(nonce, forKey: .nonce)
    }

    private enum CodingKeys: String, CodingKey {
        case email, password, scope, nonce, username
        case clientId = "client_id"
    }
}

/// Which sessions `POST /v1/logout` ends.
public enum LogoutScope: String, Codable, Hashable, Sendable, CaseIterable {
    /// This session only.
    case local
    /// Every session of the user but this one.
    case others
    /// Every session of the user.
    case global
}

/// `POST /v1/logout`.
public struct LogoutRequest: Codable, Hashable, Sendable {
    public var scope: LogoutScope?
    public init(scope: LogoutScope? = nil) { self.scope = scope }
}

/// `PATCH /v1/me`.
public struct ProfileUpdateRequest: Codable, Hashable, Sendable {
    public var profile: Profile
    public init(profile: Profile) { self.profile = profile }
}

/// `PUT /v1/me/password`.
public struct PasswordChangeRequest: Codable, Hashable, Sendable {
    public var password: String
    public var currentPassword: String?

    public init(password: String, currentPassword: String? = nil) {
        self.password = password
        self.currentPassword = currentPassword
    }

    private enum CodingKeys: String, CodingKey {
        case password
        case currentPassword = "current_password"
    }
}

/// `POST /v1/verification`: send the verification mail again.
public struct VerificationResendRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String

    public init(clientId: String? = nil, email: String) {
        self.clientId = clientId
        self.email = email
    }

    private enum CodingKeys: String, CodingKey {
        case email
        case clientId = "client_id"
    }
}

/// `POST /v1/verify` and `POST /v1/recovery/verify`: `email` + `code`, or the link's `token`.
public struct CodeVerificationRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String?
    public var code: String?
    public var token: String?

    public init(clientId: String? = nil, email: String? = nil, code: String? = nil, token: String? = nil) {
        self.clientId = clientId
        self.email = email
        self.code = code
        self.token = token
    }

    private enum CodingKeys: String, CodingKey {
        case email, code, token
        case clientId = "client_id"
    }
}

/// `POST /v1/recovery`.
public struct RecoveryRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String
    public var redirectTo: String?

    public init(clientId: String? = nil, email: String, redirectTo: String? = nil) {
        self.clientId = clientId
        self.email = email
        self.redirectTo = redirectTo
    }

    private enum CodingKeys: String, CodingKey {
        case email
        case clientId = "client_id"
        case redirectTo = "redirect_to"
    }
}
