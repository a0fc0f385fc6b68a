import Foundation
import Gatehouse
import Testing

/// The stream and the delegate see the same events in the same order, and the synchronous state
/// agrees with them at every step.
@Suite("Events and state (scripted server)")
struct EventOrderTests {
    final class Delegate: AuthClientDelegate, @unchecked Sendable {
        // `@unchecked Sendable` is sound: `received` is only touched while `lock` is held.
        private let lock = NSLock()
        private var received: [AuthEvent] = []
        var events: [AuthEvent] { lock.withLock { received } }
        func authClient(_ client: AuthClient, didReceive event: AuthEvent) async {
            lock.withLock { received.append(event) }
        }
    }

    @Test("U-9: restore, sign in, refresh, update, sign out: stream, delegate and state in step")
    func order() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /oauth/token", Fixture.tokens(2, user: nil))
        var renamed = Fixture.user
        renamed.profile.givenName = "Augusta"
        await server.on("PATCH /v1/me", .json(200, renamed))
        await server.on("POST /v1/logout", .noContent)
        let client = Fixture.client(server)
        let delegate = Delegate()
        client.setDelegate(delegate)  // not async: callable from synchronous code
        let recorder = await EventRecorder.following(client)
        #expect(client.state == .restoring)

        await client.restore()
        #expect(client.state == .signedOut)
        try await client.signIn(email: "ada@example.com", password: "pw")
        #expect(client.state == .signedIn(Fixture.user))
        try await client.refreshSession()
        try await client.updateProfile(Profile(givenName: "Augusta"))
        #expect(client.currentUser?.profile.givenName == "Augusta")
        #expect(try await client.signOut().isRevoked)
        #expect(client.state == .signedOut)

        let expected: [AuthEvent] = [
            .current(.restoring), .current(.signedOut), .signedIn(Fixture.user), .tokenRefreshed, .userUpdated(renamed),
            .signedOut(.userRequested),
        ]
        #expect(await recorder.first(expected.count) == expected)
        // The delegate was set before the stream opened: it gets every event but the stream's first.
        #expect(delegate.events == Array(expected.dropFirst()))
    }

    @Test("U-10: signing in while signed in revokes the old session by its refresh token")
    func signInAgain() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1), Fixture.tokens(2))
        await server.on("POST /oauth/revoke", ScriptedServer.Reply(status: 200, body: Data()))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw")
        try await client.signIn(email: "ada@example.com", password: "pw")
        let revoked = await server.calls(to: "POST /oauth/revoke")
        #expect(revoked.map { $0.form["token"] } == ["refresh-1"])
        #expect(revoked.first?.form["token_type_hint"] == "refresh_token")
        #expect(client.session?.accessToken == "access-2")
    }
}
