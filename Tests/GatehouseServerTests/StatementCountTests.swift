import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// The statements each token path sends to the database, counted where they leave the process
/// (`SQLPersistence.statements`, BEGIN and COMMIT of PostgreSQL transactions included): on
/// PostgreSQL each is a round trip.
@Suite("Statements per token path")
struct StatementCountTests {
    @Test(
        "SC-1: a chain refresh is one statement (its claim, outside any transaction), introspecting an access token or a refresh token one, /v1/me one (the session joined with its user)",
        arguments: TestDatabase.available)
    func tokenPaths(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        let counter = server.server.persistence.statements
        try await server.withRouter { client in
            let user = try await signUp(client)
            let backend = try await ClientAdmin(persistence: server.persistence, clock: server.clock)
                .create(id: nil, name: "backend", kind: .confidential, redirectURIs: [], scopes: [], settings: [])
            let basic = (backend.client.id, try #require(backend.secret))
            // Client records are cached after their first use: one round of each warms them.
            var refreshed = try await refresh(client, user.refreshToken)
            _ = try await client.form("/oauth/introspect", ["token": user.accessToken], basic: basic)
            _ = try await client.json(.get, "/v1/me", bearer: user.accessToken)

            // Each run right after an unmeasured one, and the fewest statements of five: client records
            // are cached for a second, so on a host slowed by the whole suite a run on its own may find
            // the cache expired and read the client too.
            func statements(_ body: () async throws -> TestResponse) async throws -> Int {
                var fewest = Int.max
                for _ in 0..<5 {
                    _ = try await body()
                    let before = counter.value
                    let answer = try await body()
                    #expect(answer.status == .ok, "\(answer.text)")
                    fewest = min(fewest, counter.value - before)
                }
                return fewest
            }
            var token = try #require(refreshed.string("refresh_token"))
            var access = user.accessToken
            #expect(
                try await statements {
                    refreshed = try await refresh(client, token)
                    token = refreshed.string("refresh_token") ?? ""
                    access = refreshed.string("access_token") ?? ""
                    return refreshed
                } == 1)
            #expect(try await statements { try await client.form("/oauth/introspect", ["token": access], basic: basic) } == 1)
            #expect(try await statements { try await client.form("/oauth/introspect", ["token": token], basic: basic) } == 1)
            #expect(try await statements { try await client.json(.get, "/v1/me", bearer: access) } == 1)

            // A refused claim reads once more to say why: here, retries inside the grace interval.
            let previous = token
            refreshed = try await refresh(client, previous)
            #expect(try await statements { try await refresh(client, previous) } == 2)
        }
    }
}
