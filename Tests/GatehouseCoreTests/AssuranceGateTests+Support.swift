import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Testing

/// The gate tests' stand-ins: the provider that answers from memory, the principal of a session,
/// the authorization request's parameters.
extension AssuranceGateTests {
    /// The principal of an app session, as the bearer authenticator makes it.
    static func principal(_ tokens: TokenResponse, core: CoreHarness) async throws -> Principal {
        let claims = try await core.services.tokens.verify(tokens.accessToken)
        let sid = try #require(UUID(uuidString: claims.sid))
        let session = try #require(try await core.persistence.read { try await $0.sessions.find(id: sid) })
        let user = try #require(try await core.persistence.read { try await $0.users.find(id: session.userID) })
        return Principal(claims: claims, session: session, user: user)
    }

    /// An OpenID provider that answers from memory (the `FederationHTTP` port), not the network: its
    /// keys, its token introspection and user info for a native access token, and its token endpoint
    /// for the web flow, which mints at `clock`'s time: the harness's, so that however long a loaded
    /// machine takes before the callback, the token is never from the harness's future.
    static func social(_ idp: TestIDTokenIssuer, clock: TestClock) -> SocialFederation {
        let provider = SocialProvider(
            id: "local", kind: .oidc, issuers: [idp.issuer], jwksURI: ScriptedFederation.jwks, clientIDs: ["gate-app"],
            clientSecret: "gate-secret",
            endpoints: .init(
                authorization: "https://idp.test/authorize", token: ScriptedFederation.token, userinfo: ScriptedFederation.userinfo,
                introspection: ScriptedFederation.introspection))
        return SocialFederation(providers: [provider], fetcher: ScriptedFederation(idp: idp, clock: clock))
    }

    /// The nonce the provider was asked for, from the URL the browser is sent to.
    static func nonce(in url: URL) throws -> String {
        try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "nonce" }?.value)
    }

    /// The provider's side of every call. Its web flow takes the nonce as the code, so the ID token it
    /// answers carries the nonce the flow asked for.
    struct ScriptedFederation: FederationHTTP {
        static let jwks = "https://idp.test/jwks"
        static let token = "https://idp.test/token"
        static let userinfo = "https://idp.test/userinfo"
        static let introspection = "https://idp.test/introspect"
        let idp: TestIDTokenIssuer
        let clock: TestClock

        func send(_ request: FederationRequest) async throws -> (status: Int, body: Data) {
            let form = Dictionary(
                (URLComponents(string: "?" + String(decoding: request.body ?? Data(), as: UTF8.self))?.queryItems ?? []).map {
                    ($0.name, $0.value ?? "")
                }, uniquingKeysWith: { $1 })
            switch request.url {
            case Self.jwks: return (200, Data(idp.jwks.utf8))
            case Self.introspection:
                return (200, Data(#"{"active": true, "client_id": "gate-app"}"#.utf8))
            case Self.userinfo:
                return (200, Data(#"{"sub": "s-at", "email": "ida-at@example.com", "email_verified": true}"#.utf8))
            case Self.token:
                let nonce = form["code"] ?? ""
                let idToken = try idp.token(
                    idp.claims(subject: "s-web", audience: "gate-app", nonce: nonce, email: "ida-web@example.com", now: clock.now()))
                return (200, Data(#"{"access_token": "at-web", "token_type": "Bearer", "id_token": "\#(idToken)"}"#.utf8))
            default: return (404, Data())
            }
        }
    }

    static let verifier = "gate-test-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
    static var challenge: String { Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))) }
    static var authorizeParameters: [String: String] {
        [
            "response_type": "code", "client_id": "app", "redirect_uri": redirect, "scope": "openid", "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256",
        ]
    }
}
