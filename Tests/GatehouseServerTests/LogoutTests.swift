import Foundation
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Logout and sessions")
struct LogoutTests {
    @Test("Global logout kills every refresh token and the old access token", arguments: TestDatabase.available)
    func globalLogout(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let first = try await signUp(client)
            let second = try await logIn(client, email: first.email, password: first.password)
            let third = try await logIn(client, email: first.email, password: first.password)

            let logout = try await client.json(.post, "/v1/logout", ["scope": "global"], bearer: second.accessToken)
            #expect(logout.status == .noContent)
            for session in [first, second, third] {
                #expect(try await refresh(client, session.refreshToken).string("error") == "invalid_grant")
                let me = try await client.json(.get, "/v1/me", bearer: session.accessToken)
                #expect(me.status == .unauthorized)
                #expect(me.string("code") == "session_revoked")
            }
        }
    }

    @Test("Local logout ends only this session; 'others' ends all but this one")
    func localAndOthers() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let a = try await signUp(client)
            let b = try await logIn(client, email: a.email, password: a.password)
            let c = try await logIn(client, email: a.email, password: a.password)

            #expect(try await client.json(.post, "/v1/logout", bearer: a.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: a.accessToken).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", bearer: b.accessToken).status == .ok)

            #expect(try await client.json(.post, "/v1/logout", ["scope": "others"], bearer: b.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: b.accessToken).status == .ok)
            #expect(try await client.json(.get, "/v1/me", bearer: c.accessToken).status == .unauthorized)
            #expect(try await refresh(client, c.refreshToken).string("error") == "invalid_grant")
        }
    }

    @Test("Sessions are listed without secrets and can be revoked one by one, only by their owner")
    func listAndRevoke() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let a = try await signUp(client)
            let b = try await logIn(client, email: a.email, password: a.password)
            let stranger = try await signUp(client)

            let list = try await client.json(.get, "/v1/me/sessions", bearer: a.accessToken)
            #expect(list.status == .ok)
            let sessions = try #require(list.object["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2)
            #expect(sessions.filter { $0["current"] as? Bool == true }.map { $0["id"] as? String } == [a.sessionID])
            #expect(!list.text.contains("gh_r_"))

            let foreign = try await client.json(.delete, "/v1/me/sessions/\(b.sessionID)", bearer: stranger.accessToken)
            #expect(foreign.status == .notFound)
            let revoke = try await client.json(.delete, "/v1/me/sessions/\(b.sessionID)", bearer: a.accessToken)
            #expect(revoke.status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: b.accessToken).status == .unauthorized)
            #expect(try await client.json(.delete, "/v1/me/sessions/not-a-uuid", bearer: a.accessToken).status == .notFound)
        }
    }
}
