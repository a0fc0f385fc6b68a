import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

extension SocialFixtures {
    /// A server whose `social` client (public, with an app redirect) offers every fixture provider.
    static func server(
        _ fake: ProviderAPIsServer, extra: [[String: Any]] = [], logs: CapturedLogs? = nil,
        assurance: (any AssurancePolicy)? = nil, factors: [any SecondFactor]? = nil,
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        let all = providers(fake) + extra
        try JSONSerialization.data(withJSONObject: ["providers": all]).write(to: file)
        let server = try await TestServer.startOpen(.sqlite, logs: logs, assurance: assurance, factors: factors) {
            $0.socialFile = file.path
            configure(&$0)
        }
        let ids = all.compactMap { $0["id"] as? String }
        try await server.createClient(
            id: "social", redirectURIs: [appRedirect, "com.example.app:/social"],
            settings: ["email_verification=off", "social_providers=\(ids.joined(separator: ","))"])
        return server
    }

}

@Suite("Social sign-in with provider access tokens")
struct SocialAccessTokenTests {
    @Test(
        "SO-4: Facebook, GitHub and an introspecting OAuth provider's access tokens sign up once (201, is_new) and in after (200); a token the provider issued to another app, a revoked token and garbage are refused; X's tokens are refused natively (nothing proves whose app they are); Facebook gets appsecret_proof, GitHub the app's basic auth; the answer reports the client's terms, and accept_terms accepts them"
    )
    func accessTokens() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let logs = CapturedLogs()
        let server = try await SocialFixtures.server(fake, logs: logs)
        let sent = TokenLog()
        try await server.withRouter { client in
            func signIn(_ provider: String, _ token: String) async throws -> TestResponse {
                sent.add(token)
                return try await client.json(.post, "/v1/social/\(provider)/token", ["client_id": "social", "access_token": token])
            }
            for (provider, fakeName, app, user) in [
                ("facebook", "facebook", SocialFixtures.facebookApp.0, "ada"), ("github", "github", SocialFixtures.githubApp.0, "octo"),
                ("acme", "oauth", SocialFixtures.oauthApp.0, "olga"),
            ] {
                let first = try await signIn(provider, try await fake.token(fakeName, clientID: app, user: user))
                #expect(first.status == .created && first.object["is_new"] as? Bool == true, "\(provider): \(first.text)")
                let id = (first.object["user"] as? [String: Any])?["id"] as? String
                let claims = try decodeClaims(try #require(first.string("access_token")))
                #expect(claims["amr"] as? [String] == ["fed"])
                let again = try await signIn(provider, try await fake.token(fakeName, clientID: app, user: user))
                #expect(again.status == .ok && again.object["is_new"] as? Bool == false, "\(provider): \(again.text)")
                #expect((again.object["user"] as? [String: Any])?["id"] as? String == id)

                // Token substitution: the same person's token, issued to another app at the provider.
                let foreign = try await signIn(provider, try await fake.token(fakeName, clientID: "other-app", user: user))
                #expect(
                    foreign.status == .unauthorized && foreign.string("code") == "invalid_provider_token", "\(provider): \(foreign.text)")
                let garbage = try await signIn(provider, "not-a-token")
                #expect(garbage.status == .unauthorized, "\(provider): \(garbage.text)")
            }
            // A token the person revoked at the provider.
            let revoked = try await fake.token("facebook", clientID: SocialFixtures.facebookApp.0, user: "ada")
            try await fake.revoke(revoked)
            #expect(try await signIn("facebook", revoked).status == .unauthorized)

            // GitHub's verified primary email made a verified account; Facebook's address is never
            // taken as proved.
            let users = try await server.persistence.read { try await $0.directory.search(UserSearch(limit: 10)) }
            #expect(users.first { $0.email == "octo@example.com" }?.emailVerified == true)
            #expect(users.first { $0.email == "ada@fb.example" }?.emailVerified == false)
            #expect(users.first { $0.email == "olga@example.com" }?.emailVerified == true)
            #expect(users.first { $0.email == "ada@fb.example" }?.profile.givenName == "Ada")

            // X has no way to ask whose app a token belongs to: only the web flow takes X.
            let x = try await signIn("x", try await fake.token("x", clientID: SocialFixtures.xApp.0, user: "xena"))
            #expect(x.status == .unprocessableContent && x.string("code") == "validation_failed", "\(x.text)")
            #expect(x.text.contains("/v1/social/x/start"))
            // Both tokens, or neither: a validation error, not a guess.
            let both = try await client.json(
                .post, "/v1/social/github/token", ["client_id": "social", "access_token": "a", "id_token": "b", "nonce": "c"])
            #expect(both.status == .unprocessableContent)
            let neither = try await client.json(.post, "/v1/social/github/token", ["client_id": "social"])
            #expect(neither.status == .unprocessableContent)
            // GitHub issues no ID tokens.
            let idToGitHub = try await client.json(
                .post, "/v1/social/github/token", ["client_id": "social", "id_token": "a.b.c", "nonce": "n"])
            #expect(idToGitHub.status == .unprocessableContent)

            // Terms: the answer says what the app must still ask for, and accept_terms accepts them.
            try await server.createClient(
                id: "terms-social", settings: ["email_verification=off", "terms_platform_version=2", "social_providers=github"])
            let unaccepted = try await client.json(
                .post, "/v1/social/github/token",
                [
                    "client_id": "terms-social",
                    "access_token": try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo"),
                ])
            #expect((unaccepted.object["user"] as? [String: Any])?["agreements_up_to_date"] as? Bool == false, "\(unaccepted.text)")
            let accepted = try await client.json(
                .post, "/v1/social/github/token",
                [
                    "client_id": "terms-social", "accept_terms": true,
                    "access_token": try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo"),
                ])
            #expect((accepted.object["user"] as? [String: Any])?["agreements_up_to_date"] as? Bool == true, "\(accepted.text)")

            // What the provider saw: Facebook's debug_token asked with the app token, /me with the
            // proof; GitHub's check with the app's basic auth and a User-Agent.
            let seen = try await fake.requests()
            let me = try #require(seen.first { ($0["path"] as? String)?.hasSuffix("/me") == true })
            let query = me["query"] as? [String: Any] ?? [:]
            let token = try #require(query["access_token"] as? String)
            let proof = HMAC<SHA256>.authenticationCode(
                for: Data(token.utf8), using: SymmetricKey(data: Data(SocialFixtures.facebookApp.1.utf8)))
            #expect(query["appsecret_proof"] as? String == proof.map { String(format: "%02x", $0) }.joined())
            let check = try #require(seen.first { ($0["path"] as? String) == "/github/applications/gh-app/token" })
            let headers = check["headers"] as? [String: Any] ?? [:]
            #expect(headers["authorization"] as? String == "Basic " + Data("gh-app:gh-secret".utf8).base64EncodedString())

            // Refusals are logged with their reason, never a token or the operator's secrets.
            let logged = logs.all.joined(separator: "\n")
            #expect(logged.contains("provider token refused"))
            for secret in sent.all.filter({ $0.count > 8 }) + [
                SocialFixtures.facebookApp.1, SocialFixtures.githubApp.1, SocialFixtures.oauthApp.1,
            ] {
                #expect(!logged.contains(secret), "a token or secret in the log")
            }

            // The refusals are in the audit log with their reasons.
            let reasons = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 200))
                .filter { $0.type == "sign_in.failed" }.compactMap(\.reason)
            // GitHub answers 404 for any token that is not the app's, garbage included.
            #expect(reasons.filter { $0 == "notIssuedToApp" }.count == 4, "\(reasons)")
            #expect(reasons.filter { $0 == "inactive" }.count == 3, "\(reasons)")
        }
    }
}

@Suite("The social providers file")
struct SocialProvidersFileTests {
    static func start(_ providers: [[String: Any]]) async throws -> TestServer {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": providers]).write(to: file)
        return try await TestServer.start(.sqlite) { $0.socialFile = file.path }
    }

    @Test(
        "SO-10: the providers file is checked whole at start: unknown keys or types, plain http to another host, a missing secret for Facebook, GitHub or X, an oauth2 provider without its endpoints, PKCE turned off without ID tokens, a web client id outside client_ids, an unset secret variable and half an Apple key stop the server; a secret from the environment is taken"
    )
    func checkedAtStart() async throws {
        let refused: [(String, [String: Any])] = [
            ("unknown key", ["id": "g", "type": "google", "client_ids": ["a"], "client_id": "a"]),
            ("unknown type", ["id": "g", "type": "myspace", "client_ids": ["a"]]),
            ("plain http", ["id": "o", "type": "oidc", "client_ids": ["a"], "issuer": "http://sso.example"]),
            ("facebook without a secret", ["id": "facebook", "type": "facebook", "client_ids": ["1"]]),
            ("x without a secret", ["id": "x", "type": "x", "client_ids": ["1"]]),
            ("oauth2 without endpoints", ["id": "o", "type": "oauth2", "client_ids": ["1"], "client_secret": "s"]),
            ("pkce off without ID tokens", ["id": "github", "type": "github", "client_ids": ["1"], "client_secret": "s", "pkce": false]),
            ("web client outside client_ids", ["id": "google", "type": "google", "client_ids": ["ios"], "web_client_id": "web"]),
            (
                "unset secret variable",
                [
                    "id": "github", "type": "github", "client_ids": ["1"],
                    "client_secret_env": "GATEHOUSE_TEST_UNSET_\(UUID().uuidString.prefix(8))",
                ]
            ),
            ("half an Apple key", ["id": "apple", "type": "apple", "client_ids": ["com.example"], "apple_team_id": "T"]),
        ]
        for (what, provider) in refused {
            do {
                let server = try await Self.start([provider])
                await server.stop()
                Issue.record("started with \(what)")
            } catch {
                #expect("\(error)".contains("social providers file"), "\(what): \(error)")
            }
        }
        let variable = "GATEHOUSE_TEST_SECRET_\(UUID().uuidString.prefix(8))"
        setenv(variable, "from-the-environment", 1)
        defer { unsetenv(variable) }
        let server = try await Self.start([["id": "github", "type": "github", "client_ids": ["1"], "client_secret_env": variable]])
        #expect(server.services.social.providers["github"]?.clientSecret == "from-the-environment")
        #expect(!"\(server.services.social.providers["github"]!)".contains("from-the-environment"), "a provider prints without its secret")
        await server.stop()
    }
}

/// The tokens a test sent, to look for in the log afterwards.
final class TokenLog: Sendable {
    private let tokens = Mutex<[String]>([])
    func add(_ token: String) { tokens.withLock { $0.append(token) } }
    var all: [String] { tokens.withLock { $0 } }
}
