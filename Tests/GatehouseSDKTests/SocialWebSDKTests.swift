import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK: provider access tokens, linked identities and the web sign-in")
struct SocialWebSDKTests {
    @Test(
        "SDK-15: signIn(with: .github/.facebook) against a live server (isNew first only); linkIdentity, identities, unlinkIdentity (last_sign_in_method for the last); socialSignInURL + completeSocialSignIn through X's web flow (isNew, then handle(url:), then after a relaunch), a sign-up's pending verifier survives it, a cancelled sign-in throws access_denied, a foreign state is refused"
    )
    func socialCalls() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": SocialFixtures.providers(fake)]).write(to: file)
        let server = try await TestServer.startLive() { $0.socialFile = file.path }
        try await server.createClient(
            id: "social-app", redirectURIs: [SocialFixtures.appRedirect],
            settings: ["email_verification=off", "social_providers=facebook,github,x"])
        try await withLiveServer(server) { base in
            let client = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "social-app", redirectURL: URL(string: SocialFixtures.appRedirect)!,
                    store: InMemorySessionStore()))

            // Native access tokens.
            let first = try await client.signIn(
                with: .github(accessToken: try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")))
            #expect(first.isNew && first.user.email == "octo@example.com" && first.user.emailVerified)
            let second = try await client.signIn(
                with: .github(accessToken: try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")))
            #expect(!second.isNew && second.user.id == first.user.id)
            let foreign = try await #require(throws: SDKError.self) {
                try await client.signIn(with: .github(accessToken: try await fake.token("github", clientID: "other-app", user: "octo")))
            }
            #expect(foreign.code == .invalidProviderToken)

            // Linking and unlinking.
            let facebook = try await client.linkIdentity(
                .facebook(accessToken: try await fake.token("facebook", clientID: SocialFixtures.facebookApp.0, user: "ada")))
            #expect(facebook.provider == "facebook" && facebook.subject == "1001")
            #expect(try await client.identities().map(\.provider).sorted() == ["facebook", "github"])
            #expect(try await client.refreshUser().identities?.count == 2)
            try await client.unlinkIdentity(facebook.id)
            let github = try #require(try await client.identities().first)
            let last = try await #require(throws: SDKError.self) { try await client.unlinkIdentity(github.id) }
            #expect(last.code == .lastSignInMethod)

            // The web sign-in: the SDK makes the start URL; a browser walks it (here hop by hop).
            func browse(_ start: URL, deny: Bool = false) async throws -> URL {
                let started = try await NoRedirectHTTP.send("GET", start)
                #expect(started.status == 302, "\(started.text)")
                let providerURL = try #require(started.location)
                var bare = URLComponents(url: providerURL, resolvingAgainstBaseURL: false)!
                let fields = (bare.queryItems ?? []).map { ($0.name, $0.value ?? "") } + [("user", "xena")] + (deny ? [("deny", "1")] : [])
                bare.query = nil
                let approved = try await NoRedirectHTTP.form(bare.url!, fields)
                // The provider sends the browser to the public URL's callback; this server listens elsewhere.
                var callback = URLComponents(url: try #require(approved.location), resolvingAgainstBaseURL: false)!
                callback.port = base.port
                let landed = try await NoRedirectHTTP.send("GET", callback.url!, headers: ["Cookie": try #require(started.cookie)])
                #expect(landed.status == 302, "\(landed.text)")
                return try #require(landed.location)
            }
            let xStore = InMemorySessionStore()
            let xClient = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "social-app", redirectURL: URL(string: SocialFixtures.appRedirect)!, store: xStore))
            // A verification mail's verifier is waiting in the store: the web sign-in keeps its own.
            try await xStore.savePendingVerifier("sign-up-verifier-from-before")
            let start = try await xClient.socialSignInURL(provider: "x")
            #expect(start.path == "/v1/social/x/start")
            let web = try await xClient.signIn(fromSocialRedirect: try await browse(start))
            #expect(web.isNew && web.user.profile.name == "Xena")
            #expect(try await xStore.loadPendingVerifier() == "sign-up-verifier-from-before", "the sign-up's verifier survives")
            #expect(xClient.currentUser?.id == web.user.id)
            #expect(try await xClient.identities().map(\.provider) == ["x"])

            // Again, through handle(url:): the same account.
            let again = try await browse(try await xClient.socialSignInURL(provider: "x"))
            #expect(try await xClient.handle(url: again))
            #expect(xClient.currentUser?.id == web.user.id)

            // The app was relaunched while the browser was open: the verifier in the store completes it.
            let beforeRelaunch = try await xClient.socialSignInURL(provider: "x")
            let relaunched = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "social-app", redirectURL: URL(string: SocialFixtures.appRedirect)!, store: xStore))
            let resumed = try await relaunched.signIn(fromSocialRedirect: try await browse(beforeRelaunch))
            #expect(!resumed.isNew && resumed.user.id == web.user.id)

            // Cancelled at the provider.
            let cancelled = try await browse(try await xClient.socialSignInURL(provider: "x"), deny: true)
            let denied = try await #require(throws: SDKError.self) { try await xClient.signIn(fromSocialRedirect: cancelled) }
            #expect(denied.code == .accessDenied)
            // A redirect this client did not start.
            _ = try await xClient.socialSignInURL(provider: "x")
            let forged = URL(string: SocialFixtures.appRedirect + "?code=gh_ac_forged&state=not-ours")!
            let refused = try await #require(throws: SDKError.self) { try await xClient.signIn(fromSocialRedirect: forged) }
            #expect(refused.code == .invalidRequest)
        }
    }
}
