import Foundation
import Gatehouse
import Testing

/// Everything an app reads often is readable without `await`: this function is synchronous, so it
/// stops compiling if any of these goes back behind the actor.
func readSynchronously(_ client: AuthClient) -> (AuthState, User?, Session?, String) {
    (client.state, client.currentUser, client.session, client.configuration.clientID)
}

@Suite("Session access, scopes, nonce and ID token (scripted server)")
struct SessionAccessTests {
    @Test("U-11: state, user, session and configuration are synchronous; the session exposes no refresh token")
    func synchronousReads() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        let client = Fixture.client(server)
        #expect(readSynchronously(client).0 == .restoring)
        try await client.signIn(email: "ada@example.com", password: "pw")
        let (state, user, session, clientID) = readSynchronously(client)
        #expect(state == .signedIn(Fixture.user) && user == Fixture.user && clientID == "app")
        #expect(session?.accessToken == "access-1")
        let labels = Mirror(reflecting: try #require(session)).children.compactMap(\.label)
        #expect(!labels.contains { $0.lowercased().contains("refresh") })
    }

    @Test("U-12: scopes go out as a sorted set, nonce with them; granted scopes and the ID token come back and survive a refresh")
    func scopesNonceIDToken() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1, scope: "openid email", idToken: "header.claims.signature"))
        await server.on("POST /oauth/token", Fixture.tokens(2, scope: "openid email", idToken: nil, user: nil))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw", scopes: [.openid, .email], nonce: "n-0S6_WzA2Mj")
        let sent = try #require(await server.calls(to: "POST /v1/login").first).json
        #expect(sent["scope"] as? String == "email openid")
        #expect(sent["nonce"] as? String == "n-0S6_WzA2Mj")
        #expect(client.session?.scopes == [.openid, .email])
        #expect(client.session?.idToken == "header.claims.signature")
        try await client.refreshSession()
        #expect(client.session?.accessToken == "access-2")
        #expect(client.session?.idToken == "header.claims.signature")

        #expect(Set<Scope>(wireValue: "  openid  offline_access ") == [.openid, .offlineAccess])
        #expect(Set<Scope>().wireValue == nil)
        try await client.signIn(email: "ada@example.com", password: "pw")
        #expect(try #require(await server.calls(to: "POST /v1/login").last).json["scope"] == nil)
    }

    @Test(
        "U-13: the code's scopes and nonce too; resendCode repeats the earlier send, never creates an account unasked, and reports the cool-down"
    )
    func codes() async throws {
        let server = ScriptedServer()
        await server.on(
            "POST /v1/otp", .json(202, OTPSentResponse(sentTo: "a***@example.com", expiresIn: 600, resendAfter: 60)),
            .problem(429, .rateLimited, headers: ["Retry-After": "42"]))
        await server.on("POST /v1/otp/verify", Fixture.tokens(1, isNew: true))
        let client = Fixture.client(server)
        let sent = try await client.sendCode(to: .email("ada@example.com"), createUser: false)
        #expect(sent.resendAfter == 60)
        let early = try await #require(throws: GatehouseError.self) { try await client.resendCode(to: .email("ada@example.com")) }
        #expect(early.isRateLimited && early.retryAfter == 42)
        let posts = await server.calls(to: "POST /v1/otp")
        #expect(posts.count == 2)
        #expect(posts.map { $0.json["create_user"] as? Bool } == [false, false])
        #expect(posts.map { $0.json["email"] as? String } == ["ada@example.com", "ada@example.com"])

        // No earlier send for this address (a relaunch): a resend never creates an account by default.
        await server.on("POST /v1/otp", .json(202, OTPSentResponse(sentTo: "b***@example.com", expiresIn: 600, resendAfter: 60)))
        try await client.resendCode(to: .email("bob@example.com"))
        try await client.resendCode(to: .email("cy@example.com"), createUser: true)
        let later = await server.calls(to: "POST /v1/otp").suffix(2)
        #expect(later.map { $0.json["create_user"] as? Bool } == [false, true])

        let signIn = try await client.signIn(code: "123456", for: .email("ada@example.com"), scopes: [.openid], nonce: "n-1")
        #expect(signIn.isNew && signIn.user == Fixture.user)
        let verify = try #require(await server.calls(to: "POST /v1/otp/verify").first).json
        #expect(verify["scope"] as? String == "openid" && verify["nonce"] as? String == "n-1")
    }

    @Test("U-14: persist: false keeps the session out of the store, refreshes included")
    func persistFalse() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /oauth/token", Fixture.tokens(2, user: nil))
        let store = InMemorySessionStore()
        let client = Fixture.client(server, store: store)
        try await client.signIn(email: "ada@example.com", password: "pw", persist: false)
        try await client.refreshSession()
        #expect(try await store.load() == nil)
        #expect(client.session?.accessToken == "access-2")
    }
}
