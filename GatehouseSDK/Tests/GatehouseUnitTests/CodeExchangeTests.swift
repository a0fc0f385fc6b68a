import Foundation
import Gatehouse
import Testing

@Suite("Authorization codes (scripted server)")
struct CodeExchangeTests {
    @Test("U-21: signIn(authorizationCode:) presents the stored PKCE verifier once, fetches the user and signs in; the ID token is kept")
    func exchange() async throws {
        let server = ScriptedServer()
        await server.on("POST /oauth/token", Fixture.tokens(1, idToken: "id.token.sig", user: nil))
        await server.on("GET /v1/me", .json(200, Fixture.user))
        let store = InMemorySessionStore()
        try await store.savePendingVerifier("kept-from-the-sign-up")
        let client = AuthClient(
            configuration: .init(
                baseURL: Fixture.baseURL, clientID: "app", redirectURL: URL(string: "com.example.app:/verified")!, store: store,
                transport: server))
        let user = try await client.signIn(authorizationCode: "one-time-code").user
        #expect(user == Fixture.user && client.state == .signedIn(Fixture.user))
        let form = try #require(await server.calls(to: "POST /oauth/token").first).form
        #expect(form["grant_type"] == "authorization_code" && form["code"] == "one-time-code" && form["client_id"] == "app")
        #expect(form["redirect_uri"] == "com.example.app:/verified" && form["code_verifier"] == "kept-from-the-sign-up")
        #expect(await server.calls(to: "GET /v1/me").first?.headers["Authorization"] == "Bearer access-1")
        #expect(try await store.loadPendingVerifier() == nil)
        #expect(client.session?.idToken == "id.token.sig")

        // The redirect URL itself goes the same way; a URL that is not Gatehouse's is left alone.
        #expect(try await client.handle(url: URL(string: "com.example.app:/verified?code=second")!))
        #expect(await server.calls(to: "POST /oauth/token").last?.form["code"] == "second")
        #expect(try await client.handle(url: URL(string: "https://elsewhere.example/verify?token=x")!) == false)
    }
}
