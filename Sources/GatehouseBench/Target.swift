import Foundation

/// The server under load and how each scenario is spoken to it: Gatehouse, or a peer measured with the
/// same generator (Glewlwyd's OIDC plugin, a fastapi-users app). Paths are overridable because a peer's
/// set-up script decides them.
public struct Target: Sendable {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        case gatehouse, glewlwyd
        case fastapiUsers = "fastapi-users"
    }

    public var kind: Kind
    public var clientID: String
    /// ID and secret of a confidential client (introspection, client credentials).
    public var confidential: (id: String, secret: String)?
    public var tokenPath: String
    public var introspectPath: String
    public var jwksPath: String
    /// The authenticated GET a signed-in user makes.
    public var mePath: String
    public var scope: String?

    public init(kind: Kind, clientID: String, confidential: (id: String, secret: String)? = nil) {
        self.kind = kind
        self.clientID = clientID
        self.confidential = confidential
        switch kind {
        case .gatehouse:
            (tokenPath, introspectPath, jwksPath, mePath) = ("/oauth/token", "/oauth/introspect", "/.well-known/jwks.json", "/v1/me")
        case .glewlwyd:
            (tokenPath, introspectPath, jwksPath, mePath) = (
                "/api/oidc/token", "/api/oidc/introspect", "/api/oidc/jwks", "/api/oidc/userinfo"
            )
        case .fastapiUsers:
            (tokenPath, introspectPath, jwksPath, mePath) = ("/auth/jwt/login", "", "", "/users/me")
        }
    }

    /// Scenarios this target can run (fastapi-users has no refresh tokens, JWKS or introspection).
    public var supported: Set<Scenario> {
        switch kind {
        case .gatehouse: Set(Scenario.allCases)
        case .glewlwyd: [.login, .refresh, .introspect, .jwks, .me, .clientCredentials, .mixed]  // no second factor
        case .fastapiUsers: [.login, .me, .signup]
        }
    }

    /// A request the load generator sends: method, path, body and headers, independent of the client.
    public struct Call: Sendable, Equatable {
        public enum Body: Sendable, Equatable {
            case none
            case json([String: String])
            case form([(String, String)])
            /// A JSON document built by the caller (nested members: a passkey's response).
            case rawJSON(String)

            public static func == (a: Body, b: Body) -> Bool {
                switch (a, b) {
                case (.none, .none): true
                case (.json(let x), .json(let y)): x == y
                case (.rawJSON(let x), .rawJSON(let y)): x == y
                case (.form(let x), .form(let y)): x.elementsEqual(y, by: { $0 == $1 })
                default: false
                }
            }
        }

        public var path: String
        public var body: Body
        public var bearer: String?
        public var basic: (String, String)?
        /// Sent as they are (a DPoP proof, `Authorization: DPoP …`).
        public var headers: [(String, String)] = []

        public init(path: String, body: Body, bearer: String? = nil, basic: (String, String)? = nil) {
            self.path = path
            self.body = body
            self.bearer = bearer
            self.basic = basic
        }

        public static func == (a: Call, b: Call) -> Bool {
            a.path == b.path && a.body == b.body && a.bearer == b.bearer && a.basic?.0 == b.basic?.0 && a.basic?.1 == b.basic?.1
        }
    }

    /// The bench client's registered redirect URI (`scripts/bench` registers it).
    public static let redirectURI = "https://bench.example/cb"

    /// `prompt=none` for a signed-in browser: the answer is a redirect with a code.
    public func authorizePath(challenge: String) -> String {
        var components = URLComponents()
        components.path = "/oauth/authorize"
        components.queryItems = [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: Self.redirectURI), URLQueryItem(name: "scope", value: "openid"),
            URLQueryItem(name: "state", value: "bench"), URLQueryItem(name: "prompt", value: "none"),
            URLQueryItem(name: "code_challenge", value: challenge), URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        return components.string ?? "/oauth/authorize"
    }

    public func exchange(code: String, verifier: String) -> Call {
        Call(
            path: tokenPath,
            body: .form([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", clientID), ("redirect_uri", Self.redirectURI),
                ("code_verifier", verifier),
            ]))
    }

    /// The start of a social sign-in through the browser, for the bench client's redirect.
    public func socialStartPath(provider: String, challenge: String, state: String) -> String {
        var components = URLComponents(string: "/v1/social/\(provider)/start")!
        components.queryItems = [
            URLQueryItem(name: "client_id", value: clientID), URLQueryItem(name: "redirect_to", value: Self.redirectURI),
            URLQueryItem(name: "code_challenge", value: challenge), URLQueryItem(name: "code_challenge_method", value: "S256"),
            URLQueryItem(name: "state", value: state),
        ]
        return components.string ?? components.path
    }

    public func providerToken(identityID: String, access: String) -> Call {
        Call(path: "/v1/me/identities/\(identityID)/token", body: .none, bearer: access)
    }

    public func identities(access: String) -> Call { Call(path: "/v1/me/identities", body: .none, bearer: access) }

    public func webSession(access: String) -> Call {
        Call(path: "/v1/web-session", body: .json(["redirect_to": "/"]), bearer: access)
    }

    public func login(_ user: SeedUser) -> Call {
        switch kind {
        case .gatehouse:
            Call(path: "/v1/login", body: .json(["client_id": clientID, "email": user.email, "password": user.password]))
        case .glewlwyd:
            // Glewlwyd's password grant takes no client or a confidential one: a public client_id is refused.
            Call(
                path: tokenPath,
                body: .form(
                    [("grant_type", "password"), ("username", user.email), ("password", user.password)]
                        + (scope.map { [("scope", $0)] } ?? [])))
        case .fastapiUsers:
            Call(path: tokenPath, body: .form([("username", user.email), ("password", user.password)]))
        }
    }

    public func refresh(_ token: String) -> Call {
        let client = kind == .glewlwyd ? [] : [("client_id", clientID)]
        return Call(path: tokenPath, body: .form([("grant_type", "refresh_token")] + client + [("refresh_token", token)]))
    }

    public func introspect(_ token: String) -> Call {
        Call(path: introspectPath, body: .form([("token", token)]), basic: confidential)
    }

    public func clientCredentials() -> Call {
        Call(
            path: tokenPath, body: .form([("grant_type", "client_credentials")] + (scope.map { [("scope", $0)] } ?? [])),
            basic: confidential)
    }

    public var jwks: Call { Call(path: jwksPath, body: .none) }

    public func me(_ access: String) -> Call { Call(path: mePath, body: .none, bearer: access) }

    /// `call` with a DPoP proof (Gatehouse only); with `boundToken`, the token goes as `Authorization: DPoP`.
    func withProof(_ call: Call, _ proof: String, boundToken: String? = nil) -> Call {
        var call = call
        call.headers.append(("DPoP", proof))
        if let boundToken {
            call.bearer = nil
            call.headers.append(("Authorization", "DPoP \(boundToken)"))
        }
        return call
    }

    public func signup(email: String, password: String) -> Call {
        switch kind {
        case .fastapiUsers: Call(path: "/auth/register", body: .json(["email": email, "password": password]))
        default: Call(path: "/v1/signup", body: .json(["client_id": clientID, "email": email, "password": password]))
        }
    }

    /// A new anonymous account (Gatehouse only).
    public func anonymous() -> Call {
        Call(path: "/v1/anonymous", body: .json(["client_id": clientID]))
    }

    /// A sign-in with a provider's ID token (Gatehouse only).
    public func socialToken(provider: String, idToken: String, nonce: String) -> Call {
        Call(path: "/v1/social/\(provider)/token", body: .json(["client_id": clientID, "id_token": idToken, "nonce": nonce]))
    }

    /// A sign-in with a provider's access token (Gatehouse only).
    public func socialAccessToken(provider: String, accessToken: String) -> Call {
        Call(path: "/v1/social/\(provider)/token", body: .json(["client_id": clientID, "access_token": accessToken]))
    }

    /// Registers a device key for the signed-in user (Gatehouse only).
    public func registerDevice(deviceID: String, publicKey: String, access: String) -> Call {
        Call(
            path: "/v1/me/authenticators", body: .json(["type": "pin", "device_id": deviceID, "public_key": publicKey]),
            bearer: access)
    }

    public func deviceChallenge(authenticatorID: String) -> Call {
        Call(path: "/v1/authenticators/challenge", body: .json(["client_id": clientID, "authenticator_id": authenticatorID]))
    }

    /// Completes a sign-in that answered `mfa_required` with an authenticator-app code.
    public func secondFactor(flowID: String, code: String) -> Call {
        Call(path: "/v1/mfa/verify", body: .json(["flow_id": flowID, "factor": "totp", "code": code]))
    }

    public func deviceAuthenticate(challengeID: String, signature: String) -> Call {
        Call(
            path: "/v1/authenticators/authenticate",
            body: .json(["client_id": clientID, "challenge_id": challengeID, "signature": signature]))
    }

    public func passkeyRegistrationOptions(access: String) -> Call {
        Call(path: "/v1/passkeys/registration/options", body: .json([:]), bearer: access)
    }

    /// `credential`: a `RegistrationResponseJSON` document.
    public func passkeyRegister(flowID: String, credential: String, access: String) -> Call {
        Call(path: "/v1/passkeys/registration", body: .rawJSON(#"{"flow_id":"\#(flowID)","credential":\#(credential)}"#), bearer: access)
    }

    public func passkeyOptions() -> Call {
        Call(path: "/v1/passkeys/authentication/options", body: .json(["client_id": clientID]))
    }

    /// `credential`: an `AuthenticationResponseJSON` document.
    public func passkeyAuthenticate(flowID: String, credential: String) -> Call {
        Call(
            path: "/v1/passkeys/authentication",
            body: .rawJSON(#"{"client_id":"\#(clientID)","flow_id":"\#(flowID)","credential":\#(credential)}"#))
    }

    /// A device (a TV) asks for a device code and a user code (RFC 8628 §3.1).
    public func deviceAuthorization() -> Call {
        Call(path: "/oauth/device_authorization", body: .form([("client_id", clientID)]))
    }

    /// The device's poll of the token endpoint with its device code.
    public func devicePoll(deviceCode: String) -> Call {
        Call(
            path: tokenPath,
            body: .form([
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode), ("client_id", clientID),
            ]))
    }

    /// The downstream service a `token-exchange` run asks tokens for: one of the confidential
    /// client's `audiences` (scripts/bench sets it).
    public static let exchangeAudience = "https://api.bench.example"

    /// A service (the confidential client) trades a user's access token for one meant for `audience`.
    public func tokenExchange(subjectToken: String, audience: String = Target.exchangeAudience) -> Call {
        Call(
            path: tokenPath,
            body: .form([
                ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("subject_token", subjectToken),
                ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), ("audience", audience),
            ]),
            basic: confidential)
    }

    /// Statuses that mean "this account already exists" when seeding.
    public var alreadyExists: Set<Int> { kind == .fastapiUsers ? [400] : [409] }
}
