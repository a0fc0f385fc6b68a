import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Anonymous accounts")
struct AnonymousAccountTests {
    static let client = "anon-app"

    static func start(_ database: TestDatabase = .sqlite, limits: String? = nil) async throws -> TestServer {
        let server = try await TestServer.start(database) { configuration in
            if let limits { try? configuration.rateLimits.apply(limits) }
        }
        try await server.createClient(
            id: client, settings: ["anonymous=on", "email_verification=off", "methods=password,email_otp"])
        return server
    }

    static func anonymous(_ client: some TestClientProtocol) async throws -> TestResponse {
        try await client.json(.post, "/v1/anonymous", ["client_id": Self.client])
    }

    @Test(
        "AN-1 An anonymous account writes its profile, links a password and signs in with it: the same id and data; tokens drop is_anonymous",
        arguments: TestDatabase.available)
    func upgradeWithPassword(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let started = try await Self.anonymous(client)
            #expect(started.status == .ok, "\(started.text)")
            #expect(started.object["is_new"] as? Bool == true)
            let user = try #require(started.object["user"] as? [String: Any])
            let id = try #require(user["id"] as? String)
            #expect(user["is_anonymous"] as? Bool == true && user["email"] == nil)
            let access = try #require(started.string("access_token"))
            let claims = try decodeClaims(access)
            #expect(claims["is_anonymous"] as? Bool == true && claims["amr"] as? [String] == ["anon"])

            let patched = try await client.json(.patch, "/v1/me", ["profile": ["given_name": "Ada"]], bearer: access)
            #expect(patched.status == .ok, "\(patched.text)")
            let upgraded = try await client.json(
                .post, "/v1/me/upgrade", ["email": "Ada@Example.com", "password": "a quiet orchard at dawn"], bearer: access)
            #expect(upgraded.status == .ok, "\(upgraded.text)")
            #expect(upgraded.string("id") == id && upgraded.string("email") == "ada@example.com")
            #expect(upgraded.object["is_anonymous"] == nil && upgraded.object["has_password"] as? Bool == true)
            try await server.deliverMail()
            #expect(server.lastMail(to: "ada@example.com", kind: "verification") != nil)

            // The session goes on; its next tokens are a permanent account's.
            let refreshed = try await refresh(client, try #require(started.string("refresh_token")), clientID: Self.client)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let after = try decodeClaims(try #require(refreshed.string("access_token")))
            #expect(after["is_anonymous"] == nil && after["amr"] as? [String] == ["pwd"])

            let again = try await logIn(client, email: "ada@example.com", password: "a quiet orchard at dawn", clientID: Self.client)
            let me = try await client.json(.get, "/v1/me", bearer: again.accessToken)
            #expect(me.string("id") == id)
            #expect((me.object["profile"] as? [String: Any])?["given_name"] as? String == "Ada")
            #expect(me.object["is_anonymous"] == nil)
            let twice = try await client.json(
                .post, "/v1/me/upgrade", ["email": "other@example.com", "password": "a quiet orchard at dawn"], bearer: again.accessToken)
            #expect(twice.status == .conflict && twice.string("code") == "not_anonymous")
        }
    }

    @Test(
        "AN-2 An address another account has is a clear 409 that leaves the anonymous account as it was; a code proves a free address",
        arguments: TestDatabase.available)
    func conflictsAndCodes(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            _ = try await signUp(client, email: "taken@example.com", password: "correct horse battery", clientID: Self.client)
            let access = try #require(try await Self.anonymous(client).string("access_token"))
            let clash = try await client.json(
                .post, "/v1/me/upgrade", ["email": "TAKEN@example.com", "password": "a quiet orchard at dawn"], bearer: access)
            #expect(clash.status == .conflict && clash.string("code") == "already_registered", "\(clash.text)")
            let still = try await client.json(.get, "/v1/me", bearer: access)
            #expect(still.object["is_anonymous"] as? Bool == true && still.object["email"] == nil)

            // A code for the taken address is sent, but it cannot take the address.
            #expect(try await client.json(.post, "/v1/me/upgrade/code", ["email": "taken@example.com"], bearer: access).status == .accepted)
            try await server.deliverMail()
            let takenCode = try #require(server.lastMail(to: "taken@example.com", kind: "otp")?.code)
            let refused = try await client.json(
                .post, "/v1/me/upgrade/verify", ["email": "taken@example.com", "code": takenCode], bearer: access)
            #expect(refused.status == .conflict && refused.string("code") == "already_registered")

            // Another anonymous account cannot spend this one's code.
            #expect(try await client.json(.post, "/v1/me/upgrade/code", ["email": "mine@example.com"], bearer: access).status == .accepted)
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "mine@example.com", kind: "otp")?.code)
            let other = try #require(try await Self.anonymous(client).string("access_token"))
            let stolen = try await client.json(.post, "/v1/me/upgrade/verify", ["email": "mine@example.com", "code": code], bearer: other)
            #expect(stolen.status == .unauthorized)
            let proved = try await client.json(.post, "/v1/me/upgrade/verify", ["email": "mine@example.com", "code": code], bearer: access)
            // The stolen attempt used the code up: codes are single use whatever happens.
            #expect(proved.status == .unauthorized)
            server.clock.advance(by: 61)
            #expect(try await client.json(.post, "/v1/me/upgrade/code", ["email": "mine@example.com"], bearer: access).status == .accepted)
            try await server.deliverMail()
            let fresh = try #require(server.lastMail(to: "mine@example.com", kind: "otp")?.code)
            let done = try await client.json(.post, "/v1/me/upgrade/verify", ["email": "mine@example.com", "code": fresh], bearer: access)
            #expect(done.status == .ok, "\(done.text)")
            #expect(done.object["email_verified"] as? Bool == true && done.object["is_anonymous"] == nil)
        }
    }

    @Test("AN-3 Housekeeping deletes anonymous accounts idle past the limit, and only those", arguments: TestDatabase.available)
    func housekeeping(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            func id(_ response: TestResponse) -> UUID? {
                ((response.object["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
            }
            let idle = try await Self.anonymous(client)
            let busy = try await Self.anonymous(client)
            let upgraded = try await Self.anonymous(client)
            _ = try await client.json(
                .post, "/v1/me/upgrade", ["email": "kept@example.com", "password": "a quiet orchard at dawn"],
                bearer: upgraded.string("access_token"))
            let permanent = try await signUp(client, email: "never-anonymous@example.com", clientID: Self.client)
            let me = try await client.json(.get, "/v1/me", bearer: permanent.accessToken)
            let ids = [id(idle), id(busy), id(upgraded), me.string("id").flatMap(UUID.init(uuidString:))].compactMap { $0 }
            try #require(ids.count == 4)

            server.clock.advance(by: 20 * 24 * 3600)
            let used = try await refresh(client, try #require(busy.string("refresh_token")), clientID: Self.client)
            #expect(used.status == .ok)
            server.clock.advance(by: 11 * 24 * 3600)
            let purged = try await Housekeeping(services: server.services).run()
            #expect(purged[.anonymousUsers] == 1)
            var left: [Bool] = []
            for userID in ids { left.append(try await server.persistence.read { try await $0.users.find(id: userID) } != nil) }
            #expect(left == [false, true, true, true])
        }
    }

    @Test("AN-4 A client without the switch refuses; sign-ups from one address block are limited")
    func switchAndLimit() async throws {
        let server = try await Self.start(limits: "signup=2/3600")
        try await server.createClient(id: "plain-app")
        try await server.withRouter { client in
            let off = try await client.json(.post, "/v1/anonymous", ["client_id": "plain-app"])
            #expect(off.status == .forbidden && off.string("code") == "not_enabled")
            #expect(try await Self.anonymous(client).status == .ok)
            #expect(try await Self.anonymous(client).status == .ok)
            let third = try await Self.anonymous(client)
            #expect(third.status == .tooManyRequests && third.headers[.retryAfter] != nil)
        }
    }

    @Test("AN-5 Linking a provider upgrades the anonymous account in place; a provider account another user has is identity_in_use")
    func upgradeWithProvider() async throws {
        let issuer = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: issuer.jwks) }
        let local: [String: Any] = [
            "id": "local", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
            "client_ids": [SocialSignInTests.app],
        ]
        let server = try await SocialSignInTests.server(providers: [local], enable: ["local"])
        try await server.createClient(id: Self.client, settings: ["anonymous=on", "email_verification=off", "social_providers=local"])
        try await server.withRouter { client in
            func idToken(_ subject: String) throws -> [String: any Sendable] {
                let nonce = "n-" + UUID().uuidString
                let token = try issuer.token(
                    issuer.claims(
                        subject: subject, audience: SocialSignInTests.app, nonce: nonce, email: "\(subject)@idp.example",
                        now: server.clock.now()))
                return ["provider": "local", "id_token": token, "nonce": nonce]
            }
            let started = try await Self.anonymous(client)
            let access = try #require(started.string("access_token"))
            let id = (started.object["user"] as? [String: Any])?["id"] as? String
            let linked = try await client.json(.post, "/v1/me/identities", try idToken("sub-anon"), bearer: access)
            #expect(linked.status == .created, "\(linked.text)")
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect(me.string("id") == id && me.object["is_anonymous"] == nil)
            let refreshed = try await refresh(client, try #require(started.string("refresh_token")), clientID: Self.client)
            let claims = try decodeClaims(try #require(refreshed.string("access_token")))
            #expect(claims["is_anonymous"] == nil && claims["amr"] as? [String] == ["fed"])
            // The provider now signs in to the same account.
            var signIn = try idToken("sub-anon")
            signIn["client_id"] = Self.client
            let back = try await client.json(.post, "/v1/social/local/token", signIn)
            #expect(back.status == .ok && (back.object["user"] as? [String: Any])?["id"] as? String == id, "\(back.text)")

            let second = try #require(try await Self.anonymous(client).string("access_token"))
            let taken = try await client.json(.post, "/v1/me/identities", try idToken("sub-anon"), bearer: second)
            #expect(taken.status == .conflict && taken.string("code") == "identity_in_use")
            #expect(try await client.json(.get, "/v1/me", bearer: second).object["is_anonymous"] as? Bool == true)
        }
    }
}
