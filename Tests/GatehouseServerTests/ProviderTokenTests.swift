import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("The provider's tokens and profile for the app")
struct ProviderTokenTests {
    /// The generic OAuth stand-in under a second id that keeps what the provider gives.
    static func keeping(_ fake: ProviderAPIsServer) -> [String: Any] {
        [
            "id": "acme-kept", "type": "oauth2", "client_ids": [SocialFixtures.oauthApp.0], "client_secret": SocialFixtures.oauthApp.1,
            "authorization_endpoint": fake.base + "/oauth/authorize", "token_endpoint": fake.base + "/oauth/token",
            "userinfo_endpoint": fake.base + "/oauth/userinfo", "keep_tokens": true, "keep_profile": true,
        ]
    }

    /// The provider's requests to one path, newest last.
    static func requests(_ fake: ProviderAPIsServer, _ path: String) async throws -> [[String: Any]] {
        try await fake.requests().filter { $0["path"] as? String == path }
    }

    static func form(_ request: [String: Any]) -> [String: String] {
        let items = URLComponents(string: "?" + (request["body"] as? String ?? ""))?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }) { $1 }
    }

    @Test(
        "PT-1: with keep_tokens and keep_profile, a web sign-in keeps the provider's tokens sealed (neither token on the raw row) and its profile as the identity's data; the app reads the very access token the provider issued over its session, a refreshed one once it expired (refresh_token grant, rotated, one provider call per expiry, audited), six concurrent reads sharing one refresh, provider_token_unavailable once the provider refuses the refresh and for a provider that keeps nothing, 403 for a third-party client (and no profile for it), 404 for another user's identity and after unlink (the row and its tokens gone), 401 without a session; no log line holds a token"
    )
    func providerTokens() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        // Two-minute access tokens: one refresh per two minutes of the test clock.
        try await fake.putApp("oauth", SocialFixtures.oauthApp.0, secret: SocialFixtures.oauthApp.1, tokenLifetime: 120)
        let logs = CapturedLogs()
        let server = try await SocialFixtures.server(fake, extra: [Self.keeping(fake)], logs: logs)
        // Only advance(by:) moves time here: expiries are compared to the second, however loaded the host.
        server.clock.freeze()
        try await server.withRouter { client in
            let walk = WebWalk(client: client, fake: fake)
            func signIn(_ provider: String, _ user: String, client: String = "social") async throws -> String {
                let pkce = WebWalk.pkce()
                let landed = try await walk.signIn(provider, user: user, pkce: pkce, clientID: client)
                let code = try #require(WebWalk.query(landed)["code"], "\(provider): \(landed)")
                let tokens = try await walk.exchange(code: code, verifier: pkce.verifier, clientID: client)
                return try #require(tokens.string("access_token"), "\(tokens.text)")
            }
            func token(_ id: String, _ bearer: String?) async throws -> TestResponse {
                try await client.json(.get, "/v1/me/identities/\(id)/token", bearer: bearer)
            }
            var seen: [String] = []

            let session = try await signIn("acme-kept", "olga")
            let issued = try #require(
                (try await Self.requests(fake, "/oauth/userinfo").last?["headers"] as? [String: Any])?["authorization"] as? String)
            let firstAccess = String(issued.dropFirst("Bearer ".count))
            seen.append(firstAccess)

            // The identity's data is the provider's answer, as it gave it.
            let list = try await client.json(.get, "/v1/me/identities", bearer: session)
            let identity = try #require((list.object["identities"] as? [[String: Any]])?.first, "\(list.text)")
            let id = try #require(identity["id"] as? String)
            let profile = identity["profile"] as? [String: Any]
            #expect(profile?["sub"] as? String == "u-77" && profile?["preferred_username"] as? String == "olga", "\(list.text)")

            // The very token the provider issued, with its expiry and scope.
            let read = try await token(id, session)
            #expect(read.status == .ok, "\(read.text)")
            #expect(read.string("access_token") == firstAccess && read.string("token_type") == "Bearer", "\(read.text)")
            #expect(read.string("identity_id") == id && read.string("provider") == "acme-kept")
            #expect(read.headers[.cacheControl]?.contains("no-store") == true)
            let expires = try #require(read.string("expires_at").flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(expires.timeIntervalSince(server.clock.now()) - 120) < 5, "\(read.text)")

            // Sealed at rest: the raw row holds neither the access nor (checked once known) the refresh token.
            func rawConfig() async throws -> String? {
                try await server.persistence.read { try await $0.credentials.find(id: id) }?.config
            }
            let firstRow = try #require(try await rawConfig())
            #expect(firstRow.contains("sealed_tokens") && !firstRow.contains(firstAccess), "\(firstRow)")
            // Not even a token's prefix: every access token of this provider starts oa_at_, every refresh token oa_rt_.
            #expect(!firstRow.contains("oa_at_") && !firstRow.contains("oa_rt_"), "\(firstRow)")

            // Expired: refreshed at the provider, once, with the kept refresh token; rotated each time.
            var refreshTokens: [String] = []
            var access = firstAccess
            for round in 1...2 {
                server.clock.advance(by: 100)
                let fresh = try await token(id, session)
                #expect(fresh.status == .ok, "\(fresh.text)")
                let next = try #require(fresh.string("access_token"))
                #expect(next != access && next.hasPrefix("oa_at_"), "round \(round): a new token")
                #expect(try await token(id, session).string("access_token") == next, "fresh now: no second refresh")
                let grants = try await Self.requests(fake, "/oauth/token").map(Self.form).filter { $0["grant_type"] == "refresh_token" }
                #expect(grants.count == round, "one provider call per expiry")
                let spent = try #require(grants.last?["refresh_token"])
                #expect(!refreshTokens.contains(spent), "the provider rotated the refresh token")
                refreshTokens.append(spent)
                access = next
                seen.append(next)
            }
            seen += refreshTokens
            let row = try #require(try await rawConfig())
            for secret in seen { #expect(!row.contains(secret) && !firstRow.contains(secret), "a token on the raw row") }
            #expect(!row.contains("oa_at_") && !row.contains("oa_rt_"), "\(row)")

            // Six reads at once of an expired token: one call to the provider, one new token for all.
            server.clock.advance(by: 100)
            let before = try await Self.requests(fake, "/oauth/token").count
            let together = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let answer = try await token(id, session)
                        return (Int(answer.status.code), answer.string("access_token"))
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(together.allSatisfy { $0.0 == 200 }, "\(together)")
            #expect(Set(together.map(\.1)).count == 1 && together[0].1 != access, "\(together)")
            #expect(try await Self.requests(fake, "/oauth/token").count == before + 1, "one refresh for six reads")
            access = try #require(together[0].1)
            seen.append(access)

            // The person withdrew the app's access at the provider: nothing to hand out, and the kept tokens go.
            try await fake.revokeRefreshTokens()
            server.clock.advance(by: 100)
            let refused = try await token(id, session)
            #expect(refused.status == .conflict && refused.string("code") == "provider_token_unavailable", "\(refused.text)")
            #expect(try await rawConfig()?.contains("sealed_tokens") == false)
            // Each call to the provider is audited; plain reads are not.
            func audited(_ type: String) async throws -> Int {
                try await server.persistence.read { try await $0.audit.list(AuditQuery(type: type)) }.count
            }
            let refreshedEvents = try await audited("identity.token_refreshed")
            let refusedEvents = try await audited("identity.token_refresh_refused")
            #expect(refreshedEvents == 3 && refusedEvents == 1)

            // A new sign-in with the provider brings new tokens.
            let again = try await signIn("acme-kept", "olga")
            let renewed = try await token(id, again)
            #expect(renewed.status == .ok && renewed.string("access_token") != access, "\(renewed.text)")
            seen += [try #require(renewed.string("access_token"))]

            // The same person through the provider id that keeps nothing: linked (verified address), no token, no profile.
            let plain = try await signIn("acme", "olga")
            let both = try await client.json(.get, "/v1/me/identities", bearer: plain).object["identities"] as? [[String: Any]] ?? []
            let plainID = try #require(both.first { $0["provider"] as? String == "acme" }?["id"] as? String)
            #expect(both.first { $0["provider"] as? String == "acme" }?["profile"] == nil)
            let nothing = try await token(plainID, plain)
            #expect(nothing.status == .conflict && nothing.string("code") == "provider_token_unavailable", "\(nothing.text)")

            // A third party the user consented to does not get their provider token, nor the kept profile.
            try await server.createClient(
                id: "partner", redirectURIs: [SocialFixtures.appRedirect],
                settings: ["email_verification=off", "third_party=on", "social_providers=acme-kept"])
            let partner = try await signIn("acme-kept", "olga", client: "partner")
            let refusedPartner = try await token(id, partner)
            #expect(refusedPartner.status == .forbidden, "\(refusedPartner.text)")
            let partnerList = try await client.json(.get, "/v1/me/identities", bearer: partner)
            #expect(partnerList.status == .ok && !partnerList.text.contains("preferred_username"), "\(partnerList.text)")
            // GET /v1/me lists identities without profiles.
            #expect(try await !client.json(.get, "/v1/me", bearer: again).text.contains("preferred_username"))

            // Another user's identity, a made-up id, no session.
            let stranger = try await signIn("github", "octo")
            #expect(try await token(id, stranger).status == .notFound)
            #expect(try await token("no-such-identity", plain).status == .notFound)
            #expect(try await token(id, nil).status == .unauthorized)

            // Unlinked: the row goes, with its tokens; the link's id answers 404.
            #expect(try await client.json(.delete, "/v1/me/identities/\(id)", bearer: plain).status == .noContent)
            #expect(try await rawConfig() == nil)
            #expect(try await token(id, plain).status == .notFound)

            let leaked = logs.all.filter { line in seen.contains { line.contains($0) } }
            #expect(leaked.isEmpty, "tokens in log lines: \(leaked)")
            #expect(seen.count == 7)
        }
    }
}
