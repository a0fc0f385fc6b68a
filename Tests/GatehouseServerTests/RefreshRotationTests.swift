import Foundation
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Refresh-token rotation")
struct RefreshRotationTests {
    @Test("50 concurrent refreshes of one token yield exactly one successor, and the session lives on", arguments: TestDatabase.available)
    func concurrentRefreshesShareOneSuccessor(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let successors = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await refresh(client, user.refreshToken)
                        return (Int(response.status.code), response.string("refresh_token"))
                    }
                }
                var all: [(Int, String?)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(successors.allSatisfy { $0.0 == 200 }, "statuses: \(successors.map(\.0))")
            let distinct = Set(successors.compactMap(\.1))
            #expect(distinct.count == 1)
            #expect(!distinct.contains(user.refreshToken))
            // The one successor works, and the session is alive.
            let next = try await refresh(client, try #require(distinct.first))
            #expect(next.status == .ok, "\(next.text)")
            let me = try await client.json(.get, "/v1/me", bearer: next.string("access_token"))
            #expect(me.status == .ok)
        }
    }

    @Test("Reuse after the grace interval revokes the session; the successor dies too", arguments: TestDatabase.available)
    func reuseAfterGraceRevokesSession(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let first = try await refresh(client, user.refreshToken)
            #expect(first.status == .ok)
            let successor = try #require(first.string("refresh_token"))
            let successorAccess = try #require(first.string("access_token"))

            // Inside the grace interval the same successor comes back.
            let retry = try await refresh(client, user.refreshToken)
            #expect(retry.string("refresh_token") == successor)

            server.clock.advance(by: 11)
            let replay = try await refresh(client, user.refreshToken)
            #expect(replay.status == .badRequest)
            #expect(replay.string("error") == "invalid_grant")

            let afterTheft = try await refresh(client, successor)
            #expect(afterTheft.status == .badRequest)
            #expect(afterTheft.string("error") == "invalid_grant")
            let me = try await client.json(.get, "/v1/me", bearer: successorAccess)
            #expect(me.status == .unauthorized)
        }
    }

    @Test("A refresh token only works for its own client and until it expires")
    func refreshTokenBinding() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(id: "other-app", settings: ["email_verification=off", "refresh_token_ttl=60"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            let wrongClient = try await refresh(client, user.refreshToken, clientID: "other-app")
            #expect(wrongClient.string("error") == "invalid_grant")
            #expect(try await refresh(client, user.refreshToken).status == .ok)
            #expect(try await refresh(client, "gh_r_not-a-real-token").string("error") == "invalid_grant")
            #expect(try await refresh(client, "garbage").string("error") == "invalid_grant")

            let short = try await signUp(client, clientID: "other-app")
            server.clock.advance(by: 61)
            let expired = try await refresh(client, short.refreshToken, clientID: "other-app")
            #expect(expired.string("error") == "invalid_grant")
        }
    }

    @Test("A refresh may narrow the scope but never widen it")
    func refreshScope() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let narrowed = try await client.form(
                "/oauth/token",
                ["grant_type": "refresh_token", "refresh_token": user.refreshToken, "client_id": TestServer.openClient, "scope": "email"])
            #expect(narrowed.status == .ok)
            #expect(narrowed.string("scope") == "email")
            let widened = try await client.form(
                "/oauth/token",
                [
                    "grant_type": "refresh_token", "refresh_token": try #require(narrowed.string("refresh_token")),
                    "client_id": TestServer.openClient, "scope": "openid admin",
                ])
            #expect(widened.string("error") == "invalid_scope")
        }
    }
}
