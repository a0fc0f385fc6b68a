/// `POST /v1/magic-link`: a sign-in mail with a link and a code, either of which works once. The link
/// is bound to the app that asked by its PKCE challenge: only the holder of the verifier can turn it
/// into a session.
public struct MagicLinkRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var email: String
    /// Where the link's page sends the browser with an authorization code (registered for the client).
    public var redirectTo: String?
    /// The S256 challenge of a verifier the app keeps (required).
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    /// Whether an unknown address gets an account when the link or code is used (default true).
    public var createUser: Bool?
    /// The client's current terms, accepted in the app before asking for the mail.
    public var acceptTerms: Bool?

    public init(
        clientId: String? = nil, email: String, redirectTo: String? = nil, codeChallenge: String? = nil,
        codeChallengeMethod: String? = nil, createUser: Bool? = nil, acceptTerms: Bool? = nil
    ) {
        self.clientId = clientId
        self.email = email
        self.redirectTo = redirectTo
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.createUser = createUser
        self.acceptTerms = acceptTerms
    }

    private enum CodingKeys: String, CodingKey {
        case email
        case clientId = "client_id"
        case redirectTo = "redirect_to"
        case codeChallenge = "code_challenge"
        case codeChallengeMethod = "code_challenge_method"
        case createUser = "create_user"
        case acceptTerms = "accept_terms"
    }
}

/// `POST /v1/magic-link/verify`: the link's token, opened in the app as a universal link, with the
/// verifier of the challenge the mail was asked for with.
public struct MagicLinkVerifyRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var token: String
    public var codeVerifier: String
    public var scope: String?
    public var nonce: String?

    public init(clientId: String? = nil, token: String, codeVerifier: String, scope: String? = nil, nonce: String? = nil) {
        self.clientId = clientId
        self.token = token
        self.codeVerifier = codeVerifier
        self.scope = scope
        self.nonce = nonce
    }

    private enum CodingKeys: String, CodingKey {
        case token, scope, nonce
        case clientId = "client_id"
        case codeVerifier = "code_verifier"
    }
}
