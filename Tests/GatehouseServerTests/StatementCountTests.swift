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
            var refreshed = try await refresh(client, user.refreshToken)
            _ = try await client.form("/oauth/introspect", ["token": user.accessToken], basic: basic)
            _ = try await client.json(.get, "/v1/me", bearer: user.accessToken)

            // Client records are cached for a second of wall time, so on a host slowed by the whole suite
            // a run may find its client's entry expired and read it again: those reads (the cache's own
            // count) are not the path's. The fewest of five runs, each right after an unmeasured one.
            let cache = server.services.clientCache
            func statements(_ body: () async throws -> TestResponse) async throws -> Int {
                var runs: [(statements: Int, clientReads: Int)] = []
                for _ in 0..<5 {
                    _ = try await body()
                    let (before, loadsBefore) = (counter.value, cache.loads)
                    let answer = try await body()
                    #expect(answer.status == .ok, "\(answer.text)")
                    runs.append((counter.value - before, cache.loads - loadsBefore))
                }
                let fewest = runs.map { $0.statements - $0.clientReads }.min() ?? 0
                if runs.contains(where: { $0.statements - $0.clientReads != fewest }) {
                    // Shown when a count differs between runs, to tell noise from a change.
                    print("SC-1 runs (statements, client reads): \(runs)")
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
