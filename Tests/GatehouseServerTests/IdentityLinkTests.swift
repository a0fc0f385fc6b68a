import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Linked provider identities")
struct IdentityLinkTests {
    @Test(
        "SO-7: a signed-in user links a provider (ID token or access token), sees it in GET /v1/me and /v1/me/identities, links it again without change, cannot take another user's identity (identity_in_use), needs a sign-in of the last 15 minutes (reauthentication_required), unlinks it unless it is the last way to sign in (last_sign_in_method), which ends the sessions it started; the linked identity signs in to the same account; bad input gets 4xx problems"
    )
    func linkAndUnlink() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let issuer = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: issuer.jwks) }
        let local: [String: Any] = [
            "id": "local", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
            "client_ids": ["gatehouse-app"],
        ]
        let server = try await SocialFixtures.server(fake, extra: [local])
        try await server.withRouter { client in
            func idToken(_ subject: String) throws -> (String, String) {
                let nonce = "n-" + UUID().uuidString
                return (
                    try issuer.token(
                        issuer.claims(
                            subject: subject, audience: "gatehouse-app", nonce: nonce, email: "\(subject)@idp.example",
                            now: server.clock.now())), nonce
                )
            }
            let owner = try await signUp(client, email: "linker@example.com", clientID: "social")

            // Link by ID token, then by a GitHub access token.
            let (token, nonce) = try idToken("sub-linker")
            let linked = try await client.json(
                .post, "/v1/me/identities", ["provider": "local", "id_token": token, "nonce": nonce], bearer: owner.accessToken)
            #expect(linked.status == .created, "\(linked.text)")
            #expect(
                linked.string("provider") == "local" && linked.string("subject") == "sub-linker"
                    && linked.string("email") == "sub-linker@idp.example")
            let githubToken = try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")
            let github = try await client.json(
                .post, "/v1/me/identities", ["provider": "github", "access_token": githubToken], bearer: owner.accessToken)
            #expect(github.status == .created, "\(github.text)")
            // The same again: nothing changes.
            let again = try await client.json(
                .post, "/v1/me/identities",
                ["provider": "github", "access_token": try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")],
                bearer: owner.accessToken)
            #expect(again.status == .ok && again.string("id") == github.string("id"))

            let me = try await client.json(.get, "/v1/me", bearer: owner.accessToken)
            let listed = (me.object["identities"] as? [[String: Any]] ?? []).compactMap { $0["provider"] as? String }.sorted()
            #expect(listed == ["github", "local"], "\(me.text)")
            let list = try await client.json(.get, "/v1/me/identities", bearer: owner.accessToken)
            #expect((list.object["identities"] as? [[String: Any]])?.count == 2)

            // The linked identity now signs in to this account (not new).
            let (signInToken, signInNonce) = try idToken("sub-linker")
            let viaProvider = try await client.json(
                .post, "/v1/social/local/token", ["client_id": "social", "id_token": signInToken, "nonce": signInNonce])
            #expect(viaProvider.status == .ok && viaProvider.object["is_new"] as? Bool == false, "\(viaProvider.text)")
            #expect(
                try decodeClaims(try #require(viaProvider.string("access_token")))["sub"] as? String
                    == (try decodeClaims(owner.accessToken)["sub"] as? String))

            // Another user cannot take it.
            let other = try await signUp(client, email: "other@example.com", clientID: "social")
            let (stolen, stolenNonce) = try idToken("sub-linker")
            let taken = try await client.json(
                .post, "/v1/me/identities", ["provider": "local", "id_token": stolen, "nonce": stolenNonce], bearer: other.accessToken)
            #expect(taken.status == .conflict && taken.string("code") == "identity_in_use", "\(taken.text)")
            // Nor link a token of another app, or a replayed nonce.
            let foreign = try await client.json(
                .post, "/v1/me/identities",
                ["provider": "github", "access_token": try await fake.token("github", clientID: "other-app", user: "octo")],
                bearer: other.accessToken)
            #expect(foreign.status == .unauthorized && foreign.string("code") == "invalid_provider_token")
            let replayed = try await client.json(
                .post, "/v1/me/identities", ["provider": "local", "id_token": token, "nonce": nonce], bearer: other.accessToken)
            #expect(replayed.status == .unauthorized)

            // Unlink: the password remains, so both identities can go; the sessions the identity started end.
            let localID = try #require(linked.string("id"))
            let providerSession = try #require(viaProvider.string("access_token"))
            #expect(try await client.json(.get, "/v1/me", bearer: providerSession).status == .ok)
            #expect(try await client.json(.delete, "/v1/me/identities/\(localID)", bearer: owner.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: providerSession).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", bearer: owner.accessToken).status == .ok, "the password's session stays")
            #expect(try await client.json(.delete, "/v1/me/identities/\(localID)", bearer: owner.accessToken).status == .notFound)
            // Someone else's identity is not found for this user.
            let githubID = try #require(github.string("id"))
            #expect(try await client.json(.delete, "/v1/me/identities/\(githubID)", bearer: other.accessToken).status == .notFound)

            // A social-only account keeps its last way in.
            let (newcomerToken, newcomerNonce) = try idToken("sub-newcomer")
            let newcomer = try await client.json(
                .post, "/v1/social/local/token", ["client_id": "social", "id_token": newcomerToken, "nonce": newcomerNonce])
            #expect(newcomer.status == .created)
            let newcomerAccess = try #require(newcomer.string("access_token"))
            let only = try await client.json(.get, "/v1/me/identities", bearer: newcomerAccess)
            let onlyID = try #require((only.object["identities"] as? [[String: Any]])?.first?["id"] as? String)
            let last = try await client.json(.delete, "/v1/me/identities/\(onlyID)", bearer: newcomerAccess)
            #expect(last.status == .conflict && last.string("code") == "last_sign_in_method", "\(last.text)")
            // With a second identity, the first may go; the second then is the last.
            let facebook = try await client.json(
                .post, "/v1/me/identities",
                [
                    "provider": "facebook",
                    "access_token": try await fake.token("facebook", clientID: SocialFixtures.facebookApp.0, user: "ada"),
                ],
                bearer: newcomerAccess)
            #expect(facebook.status == .created, "\(facebook.text)")
            #expect(try await client.json(.delete, "/v1/me/identities/\(onlyID)", bearer: newcomerAccess).status == .noContent)
            // That identity started this very session: it ended with it. Facebook signs the user in now.
            #expect(try await client.json(.get, "/v1/me", bearer: newcomerAccess).status == .unauthorized)
            let viaFacebook = try await client.json(
                .post, "/v1/social/facebook/token",
                [
                    "client_id": "social",
                    "access_token": try await fake.token("facebook", clientID: SocialFixtures.facebookApp.0, user: "ada"),
                ])
            #expect(viaFacebook.status == .ok && viaFacebook.object["is_new"] as? Bool == false, "\(viaFacebook.text)")
            let facebookID = try #require(facebook.string("id"))
            let facebookAccess = try #require(viaFacebook.string("access_token"))
            #expect(try await client.json(.delete, "/v1/me/identities/\(facebookID)", bearer: facebookAccess).status == .conflict)

            // Audit: two links and the unlink of the owner, with the provider.
            let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 200))
            #expect(events.filter { $0.type == "identity.linked" }.count == 3)
            #expect(events.filter { $0.type == "identity.unlinked" }.compactMap(\.method).sorted() == ["social:local", "social:local"])

            // An old session cannot add a way in: sign in again first.
            server.clock.advance(by: IdentitiesFlow.recentSignIn + 60)
            // A fresh access token of the old session (refreshed), so only the sign-in's age is wrong.
            let refreshed = try await refresh(client, other.refreshToken, clientID: "social")
            let staleAccess = try #require(refreshed.string("access_token"), "\(refreshed.text)")
            let stale = try await client.json(
                .post, "/v1/me/identities",
                ["provider": "github", "access_token": try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")],
                bearer: staleAccess)
            #expect(stale.status == .forbidden && stale.string("code") == "reauthentication_required", "\(stale.text)")
            let fresh = try await logIn(client, email: "other@example.com", password: other.password, clientID: "social")
            let relinked = try await client.json(
                .post, "/v1/me/identities",
                ["provider": "github", "access_token": try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")],
                bearer: fresh.accessToken)
            #expect(
                relinked.status == .conflict && relinked.string("code") == "identity_in_use", "past the recency check: \(relinked.text)")

            // Bad input: 4xx problems.
            #expect(try await client.json(.get, "/v1/me/identities").status == .unauthorized)
            #expect(
                try await client.json(.post, "/v1/me/identities", ["provider": "github"], bearer: fresh.accessToken).status
                    == .unprocessableContent)
            #expect(
                try await client.json(.post, "/v1/me/identities", ["access_token": "x"], bearer: fresh.accessToken).status
                    == .unprocessableContent)
            #expect(
                try await client.json(
                    .post, "/v1/me/identities", ["provider": "Not Valid!", "access_token": "x"], bearer: fresh.accessToken
                ).status == .forbidden)
            #expect(
                try await client.json(.post, "/v1/me/identities", ["provider": "nope", "access_token": "x"], bearer: fresh.accessToken)
                    .status == .forbidden)
            #expect(
                try await client.raw(
                    .post, "/v1/me/identities", body: Array("{".utf8), contentType: "application/json", bearer: fresh.accessToken
                ).status == .badRequest)
        }
        await jwks.stop()
    }
}
