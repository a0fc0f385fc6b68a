import Foundation

/// An OpenID Connect authorization request (OIDC Core §3.1.2.1), checked against the client's
/// registration. Kept whole in the flow record while the browser goes through the hosted pages.
public struct AuthorizationRequest: Sendable, Codable, Hashable {
    public enum ResponseMode: String, Sendable, Codable, Hashable {
        case query
        case formPost = "form_post"
        /// A device's approval (RFC 8628): the code is kept for the device, the browser sees a page.
        /// Never parsed from a request: only ``DeviceAuthorizations`` makes one.
        case device
    }

    public var clientID: String
    public var redirectURI: String
    public var responseMode: ResponseMode
    public var state: String?
    public var nonce: String?
    /// The granted scopes: those asked for that the client may have.
    public var scopes: [String]
    public var pkce: PKCEChallenge?
    /// `none`, `login`, `consent`, `select_account`.
    public var prompt: Set<String>
    public var maxAge: Int?
    public var loginHint: String?
    public var uiLocales: String?
    /// The level the client asked for with `acr_values` (OIDC Core §3.1.2.1, RFC 9470): the lowest
    /// level among the values Gatehouse knows, since any of them would do; first factor when none is known.
    /// Optional so that flows kept before it existed still decode.
    var asked: AssuranceLevel?
    public var askedLevel: AssuranceLevel { asked ?? .firstFactor }
    /// Single claims asked for with the `claims` parameter (OIDC Core §5.5).
    public var claims: RequestedClaims?
    /// The subject of a verified `id_token_hint`: only that user's browser session may answer.
    public var hintSubject: String?

    /// The `acr` values Gatehouse issues and reads: `0` a browser session stood in, `1` one factor in
    /// this sign-in, `2` a second factor was part of it.
    public static let acrValues = ["0", "1", "2"]

    static let knownPrompts: Set<String> = ["none", "login", "consent", "select_account"]
    static let maxLength = 512
    /// Parameters that carry a token or a JSON document rather than a word: an ID token with profile
    /// claims is some 1,000 bytes (RS256), so the general cap would refuse Gatehouse's own hints.
    static let longParameters: [String: Int] = ["id_token_hint": 8192, "claims": 4096, "login_hint": .max]

    /// Why a request cannot be answered at its redirect URI: the client or the URI is unknown, so
    /// nothing proves the URI is the client's (RFC 6749 §4.1.2.1: tell the user, never redirect).
    public struct Untrusted: Error, Sendable {
        public var detail: String
    }

    /// An error the client hears at its (verified) redirect URI, in the response mode and with the
    /// state the request asked for (also when they came in a request object).
    public struct Refused: Error, Sendable {
        public var error: String
        public var description: String
        public var redirectURI: String
        public var mode: ResponseMode
        public var state: String?
    }

    /// The client and its exact redirect URI first (a failure there is ``Untrusted``), then the rest
    /// (a failure is ``Refused``, sent back to the client).
    /// A parameter given twice never gets here: the form decoder refuses it (a 400 page).
    /// `hint`: the subject of an `id_token_hint` this server signed, nil for anything else.
    /// `pushed`: the request came to the PAR endpoint (RFC 9126), so a client that must push passes.
    static func parse(
        _ query: [String: String], clients: ClientResolver, hint: (String) async -> String?, objects: RequestObject.Checks,
        pushed: Bool = false
    ) async throws -> (AuthorizationRequest, ClientRecord) {
        // RFC 9101 §5 keeps client_id in the query even beside a request object: it names the keys
        // the object is checked with.
        guard let clientID = query["client_id"], !clientID.isEmpty else {
            throw Untrusted(detail: "client_id is missing.")
        }
        let client: ClientRecord
        do {
            client = try await clients.resolve(clientID)
        } catch let error as GatehouseError where error.category != .internalFailure && error.category != .unavailable {
            throw Untrusted(detail: "The client is not known.")
        }
        // Then the request object: its redirect_uri, response_mode and state are the ones that count.
        var p = query
        var objectError: RequestObject.Invalid?
        if let object = query["request"] {
            do {
                p = try await RequestObject.merge(object, into: query, client: client, checks: objects)
            } catch let invalid as RequestObject.Invalid {
                objectError = invalid
            }
        }
        // A pushed request is answered directly (no redirect is at stake): its object's fault first.
        if pushed, let objectError {
            throw Refused(error: objectError.error, description: objectError.description, redirectURI: "", mode: .query, state: nil)
        }
        // OIDC Core §3.1.2.1 makes redirect_uri required; it must equal a registered one exactly.
        guard let redirectURI = p["redirect_uri"], client.redirectURIs.contains(redirectURI) else {
            throw Untrusted(detail: "redirect_uri is missing or not registered for this client.")
        }
        // An unknown mode is answered by query: the mode asked for is the one we cannot speak.
        let mode: ResponseMode = p["response_mode"] == "form_post" ? .formPost : .query
        func refuse(_ error: String, _ description: String) -> Refused {
            Refused(error: error, description: description, redirectURI: redirectURI, mode: mode, state: p["state"])
        }
        if let objectError { throw refuse(objectError.error, objectError.description) }
        if client.settings.requirePushedAuthorizationRequests.isOn && !pushed {
            throw refuse("invalid_request", "This client must push its authorization requests first (PAR, RFC 9126).")
        }
        if let raw = p["response_mode"], raw != "query", raw != "form_post" {
            throw refuse("invalid_request", "response_mode must be query or form_post.")
        }
        if let long = p.first(where: { $0.value.utf8.count > (Self.longParameters[$0.key] ?? Self.maxLength) && $0.key != "request" }) {
            throw refuse("invalid_request", "\(long.key) is too long.")
        }
        if p["request_uri"] != nil {
            throw refuse("request_uri_not_supported", "request_uri is only for requests pushed to this server (PAR).")
        }
        guard let responseType = p["response_type"] else { throw refuse("invalid_request", "response_type is required.") }
        guard responseType == "code" else { throw refuse("unsupported_response_type", "Only response_type=code is supported.") }
        var pkce: PKCEChallenge?
        if let challenge = p["code_challenge"] {
            guard let parsed = PKCEChallenge(challenge: challenge, method: p["code_challenge_method"] ?? "plain") else {
                throw refuse("invalid_request", "code_challenge must be S256 (43 to 128 characters); plain is not supported.")
            }
            pkce = parsed
        } else if client.kind == .public {
            throw refuse("invalid_request", "A public client must send a PKCE code_challenge (S256).")
        }
        let prompt = Set((p["prompt"] ?? "").split(separator: " ").map(String.init))
        guard prompt.isSubset(of: Self.knownPrompts) else { throw refuse("invalid_request", "prompt has an unknown value.") }
        if prompt.contains("none") && prompt.count > 1 { throw refuse("invalid_request", "prompt=none cannot be combined.") }
        var maxAge: Int?
        if let raw = p["max_age"] {
            guard let value = Int(raw), value >= 0 else { throw refuse("invalid_request", "max_age must be a whole number of seconds.") }
            maxAge = value
        }
        var claims: RequestedClaims?
        if let raw = p["claims"] {
            guard let parsed = RequestedClaims.parse(raw) else {
                throw refuse("invalid_request", "claims must be a JSON object with userinfo and id_token members.")
            }
            claims = parsed
        }
        var hintSubject: String?
        if let raw = p["id_token_hint"] {
            guard let subject = await hint(raw) else {
                throw refuse("invalid_request", "id_token_hint is not an ID token this server issued.")
            }
            hintSubject = subject
        }
        let known = (p["acr_values"] ?? "").split(separator: " ").compactMap { Int($0) }.filter { (0...2).contains($0) }
        var askedLevel: AssuranceLevel = known.isEmpty || known.contains(where: { $0 < 2 }) ? .firstFactor : .multiFactor
        if let acr = claims?.acr { askedLevel = max(askedLevel, acr) }
        let requested = p["scope"] ?? ""
        guard requested.split(separator: " ").contains("openid") else {
            throw refuse("invalid_scope", "scope must include openid.")
        }
        let scopes = SessionIssuer.grant(requested: requested, client: client)
        var request = AuthorizationRequest(
            clientID: client.id, redirectURI: redirectURI, responseMode: mode, state: p["state"], nonce: p["nonce"], scopes: scopes,
            pkce: pkce, prompt: prompt, maxAge: maxAge, loginHint: p["login_hint"].map { String($0.prefix(254)) },
            uiLocales: p["ui_locales"])
        request.asked = askedLevel == .firstFactor ? nil : askedLevel
        request.claims = claims.flatMap { $0.isEmpty ? nil : $0 }
        request.hintSubject = hintSubject
        return (request, client)
    }

    init(
        clientID: String, redirectURI: String, responseMode: ResponseMode, state: String?, nonce: String? = nil, scopes: [String] = [],
        pkce: PKCEChallenge? = nil, prompt: Set<String> = [], maxAge: Int? = nil, loginHint: String? = nil, uiLocales: String? = nil
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.responseMode = responseMode
        self.state = state
        self.nonce = nonce
        self.scopes = scopes
        self.pkce = pkce
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.uiLocales = uiLocales
    }
}

/// What goes back to the client's redirect URI (RFC 6749 §4.1.2, RFC 9207 `iss`), by query or by a
/// form the browser posts (OAuth 2.0 Form Post Response Mode).
public struct AuthorizationResponse: Sendable {
    public var redirectURI: String
    public var mode: AuthorizationRequest.ResponseMode
    public var fields: [(String, String)]

    static func code(_ code: String, for request: AuthorizationRequest, issuer: String) -> AuthorizationResponse {
        AuthorizationResponse(
            redirectURI: request.redirectURI, mode: request.responseMode,
            fields: [("code", code)] + (request.state.map { [("state", $0)] } ?? []) + [("iss", issuer)])
    }

    static func error(
        _ error: String, _ description: String, redirectURI: String, mode: AuthorizationRequest.ResponseMode, state: String?,
        issuer: String
    ) -> AuthorizationResponse {
        AuthorizationResponse(
            redirectURI: redirectURI, mode: mode,
            fields: [("error", error), ("error_description", description)] + (state.map { [("state", $0)] } ?? []) + [("iss", issuer)])
    }
}
