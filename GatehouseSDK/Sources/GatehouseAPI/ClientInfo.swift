/// One terms document: its version and where to read it.
public struct TermsDocument: Codable, Hashable, Sendable {
    public var version: String
    public var url: String?

    public init(version: String, url: String?) {
        self.version = version
        self.url = url
    }
}

/// `GET /v1/terms`: the platform's and the client's terms, when set.
public struct Terms: Codable, Hashable, Sendable {
    public var platform: TermsDocument?
    public var client: TermsDocument?

    public init(platform: TermsDocument?, client: TermsDocument?) {
        self.platform = platform
        self.client = client
    }
}

/// `GET /v1/me/agreements`, and the body of `POST /v1/me/agreements` (without `up_to_date`).
public struct Agreements: Codable, Hashable, Sendable {
    public var platformVersion: String?
    public var clientVersion: String?
    public var upToDate: Bool?

    public init(platformVersion: String?, clientVersion: String?, upToDate: Bool? = nil) {
        self.platformVersion = platformVersion
        self.clientVersion = clientVersion
        self.upToDate = upToDate
    }

    private enum CodingKeys: String, CodingKey {
        case platformVersion = "platform_version"
        case clientVersion = "client_version"
        case upToDate = "up_to_date"
    }
}

/// `GET /v1/required-fields` (what the client requires) and `GET /v1/me/required-fields` (what the
/// user still lacks).
public struct RequiredFields: Codable, Hashable, Sendable {
    public var requiredFields: [String]

    public init(requiredFields: [String]) { self.requiredFields = requiredFields }

    private enum CodingKeys: String, CodingKey {
        case requiredFields = "required_fields"
    }
}

/// The password rules an app can show before the user types.
public struct PasswordRules: Codable, Hashable, Sendable {
    public var minLength: Int
    public var maxBytes: Int

    public init(minLength: Int, maxBytes: Int) {
        self.minLength = minLength
        self.maxBytes = maxBytes
    }

    private enum CodingKeys: String, CodingKey {
        case minLength = "min_length"
        case maxBytes = "max_bytes"
    }
}

/// `GET /v1/client`: everything an app needs to draw its sign-in screens.
public struct ClientInfo: Codable, Hashable, Sendable {
    public var clientId: String
    public var name: String
    public var methods: [String]
    public var socialProviders: [String]
    public var terms: Terms
    public var requiredFields: [String]
    public var passwordPolicy: PasswordRules
    public var scopes: [String]

    public init(
        clientId: String, name: String, methods: [String], socialProviders: [String], terms: Terms,
        requiredFields: [String], passwordPolicy: PasswordRules, scopes: [String]
    ) {
        self.clientId = clientId
        self.name = name
        self.methods = methods
        self.socialProviders = socialProviders
        self.terms = terms
        self.requiredFields = requiredFields
        self.passwordPolicy = passwordPolicy
        self.scopes = scopes
    }

    private enum CodingKeys: String, CodingKey {
        case name, methods, terms, scopes
        case clientId = "client_id"
        case socialProviders = "social_providers"
        case requiredFields = "required_fields"
        case passwordPolicy = "password_policy"
    }
}
