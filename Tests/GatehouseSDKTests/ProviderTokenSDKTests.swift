import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK: the provider's tokens for the app")
struct ProviderTokenSDKTests {
    @Test(
        "SDK-25: after a web sign-in with X under keep_tokens (offline.access), providerToken(forIdentity:) returns the provider's access token (never in its description) and a refreshed one once it expired; the identity carries X's profile; a provider that keeps nothing throws provider_token_unavailable, an unlinked identity not_found"
    )
    func providerTokens() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        try await fake.putApp("x", SocialFixtures.xApp.0, secret: SocialFixtures.xApp.1, tokenLifetime: 120)
        var kept = try #require(SocialFixtures.providers(fake).first { $0["id"] as? String == "x" })
        kept["id"] = "x-kept"
        kept["scopes"] = ["users.read", "tweet.read", "offline.access"]
        kept["keep_tokens"] = true
        kept["keep_profile"] = true
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": SocialFixtures.providers(fake) + [kept]]).write(to: file)
        let server = try await TestServer.startLive() { $0.socialFile = file.path }
        try await server.createClient(
            id: "social-app", redirectURIs: [SocialFixtures.appRedirect], settings: ["email_verification=off", "social_providers=x,x-kept"])
        try await withLiveServer(server) { base in
            let client = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "social-app", redirectURL: URL(string: SocialFixtures.appRedirect)!,
                    store: InMemorySessionStore()))
            // The browser's part, hop by hop.
            func browse(_ start: URL) async throws -> URL {
                let started = try await NoRedirectHTTP.send("GET", start)
                let providerURL = try #require(started.location, "\(started.text)")
                var bare = URLComponents(url: providerURL, resolvingAgainstBaseURL: false)!
                let fields = (bare.queryItems ?? []).map { ($0.name, $0.value ?? "") } + [("user", "xena")]
                bare.query = nil
                let approved = try await NoRedirectHTTP.form(bare.url!, fields)
                var callback = URLComponents(url: try #require(approved.location, "\(approved.text)"), resolvingAgainstBaseURL: false)!
                callback.port = base.port
                let landed = try await NoRedirectHTTP.send("GET", callback.url!, headers: ["Cookie": try #require(started.cookie)])
                return try #require(landed.location, "\(landed.text)")
            }

            _ = try await client.signIn(fromSocialRedirect: try await browse(try await client.socialSignInURL(provider: "x-kept")))
            let identity = try #require(try await client.identities().first)
            #expect(identity.provider == "x-kept" && identity.profile?["username"] == .string("xena"), "\(identity)")
            let first = try await client.providerToken(forIdentity: identity.id)
            #expect(first.accessToken.hasPrefix("x_at_") && first.identityID == identity.id && first.expiresAt != nil)
            #expect(!"\(first)".contains(first.accessToken), "the description hides the token")
            // X checks it: the token is the person's at X.
            let me = try await NoRedirectHTTP.send(
                "GET", URL(string: fake.base + "/x/2/users/me")!, headers: ["Authorization": "Bearer " + first.accessToken])
            #expect(me.status == 200, "\(me.text)")

            server.clock.advance(by: 100)
            let second = try await client.providerToken(forIdentity: identity.id)
            #expect(second.accessToken != first.accessToken && second.accessToken.hasPrefix("x_at_"))

            // The same person through the X that keeps nothing (linked by X's confirmed address).
            _ = try await client.signIn(fromSocialRedirect: try await browse(try await client.socialSignInURL(provider: "x")))
            let plain = try #require(try await client.identities().first { $0.provider == "x" })
            let none = try await #require(throws: SDKError.self) { try await client.providerToken(forIdentity: plain.id) }
            #expect(none.code == .providerTokenUnavailable)

            try await client.unlinkIdentity(identity.id)
            let gone = try await #require(throws: SDKError.self) { try await client.providerToken(forIdentity: identity.id) }
            #expect(gone.code == .notFound)
        }
    }
}
