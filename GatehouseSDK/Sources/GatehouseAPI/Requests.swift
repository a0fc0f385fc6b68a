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

    public init(
        clientId: String? = nil, email: String, password: String, profile: Profile? = nil, acceptTerms: Bool? = nil,
        redirectTo: String? = nil, codeChallenge: String? = nil, codeChallengeMethod: String? = nil
    ) {
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
        case email, password, profile
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

    public init(clientId: String? = nil, email: String, password: String, scope: String? = nil, nonce: String? = nil) {
        self.clientId = clientId
        self.email = email
        self.password = password
        self.scope = scope
        self.nonce = nonce
    }

    private enum CodingKeys: String, CodingKey {
        case email, password, scope, nonce
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
