/// `POST /v1/otp`: a one-time code to an email address or a phone number.
public struct OTPRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String?
    public var phone: String?
    /// Whether an unknown identifier gets an account on verification (default true).
    public var createUser: Bool?

    public init(clientId: String? = nil, email: String? = nil, phone: String? = nil, createUser: Bool? = nil) {
        self.clientId = clientId
        self.email = email
        self.phone = phone
        self.createUser = createUser
    }

    private enum CodingKeys: String, CodingKey {
        case email, phone
        case clientId = "client_id"
        case createUser = "create_user"
    }
}

/// The answer to `POST /v1/verification` and `POST /v1/recovery` (the same whether or not a mail
/// went out): how long until the next may be asked for.
public struct MailSentResponse: Codable, Hashable, Sendable {
    /// Seconds before another mail of this kind to this address is accepted (the send cool-down).
    public var resendAfter: Int

    public init(resendAfter: Int) { self.resendAfter = resendAfter }

    private enum CodingKeys: String, CodingKey {
        case resendAfter = "resend_after"
    }
}

/// The answer to `POST /v1/otp`.
public struct OTPSentResponse: Codable, Hashable, Sendable {
    /// The identifier, masked (`j***@example.com`, `+47*****567`).
    public var sentTo: String
    public var expiresIn: Int
    public var resendAfter: Int

    public init(sentTo: String, expiresIn: Int, resendAfter: Int) {
        self.sentTo = sentTo
        self.expiresIn = expiresIn
        self.resendAfter = resendAfter
    }

    private enum CodingKeys: String, CodingKey {
        case sentTo = "sent_to"
        case expiresIn = "expires_in"
        case resendAfter = "resend_after"
    }
}

/// `POST /v1/otp/verify`.
public struct OTPVerifyRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String?
    public var phone: String?
    public var code: String
    public var scope: String?
    /// Echoed in the ID token when `openid` is granted.
    public var nonce: String?
    public var acceptTerms: Bool?

    public init(
        clientId: String? = nil, email: String? = nil, phone: String? = nil, code: String, scope: String? = nil,
        nonce: String? = nil, acceptTerms: Bool? = nil
    ) {
        self.clientId = clientId
        self.email = email
        self.phone = phone
        self.code = code
        self.scope = scope
        self.nonce = nonce
        self.acceptTerms = acceptTerms
    }

    private enum CodingKeys: String, CodingKey {
        case email, phone, code, scope, nonce
        case clientId = "client_id"
        case acceptTerms = "accept_terms"
    }
}

/// `GET /v1/identifiers/status`.
public struct IdentifierStatus: Codable, Hashable, Sendable {
    public var exists: Bool
    public var verified: Bool
    public var hasPassword: Bool

    public init(exists: Bool, verified: Bool, hasPassword: Bool) {
        self.exists = exists
        self.verified = verified
        self.hasPassword = hasPassword
    }

    private enum CodingKeys: String, CodingKey {
        case exists, verified
        case hasPassword = "has_password"
    }
}

/// `POST /v1/anonymous`: a new anonymous account for the client.
public struct AnonymousSignInRequest: Codable, Hashable, Sendable {
    public var clientId: String?

    public init(clientId: String? = nil) { self.clientId = clientId }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
    }
}

/// The anonymous account's upgrade: `POST /v1/me/upgrade` (`email` and `password`),
/// `POST /v1/me/upgrade/code` (`email`) and `POST /v1/me/upgrade/verify` (`email` and `code`).
public struct AccountUpgradeRequest: Codable, Hashable, Sendable {
    public var email: String
    public var password: String?
    public var code: String?

    public init(email: String, password: String? = nil, code: String? = nil) {
        self.email = email
        self.password = password
        self.code = code
    }
}
