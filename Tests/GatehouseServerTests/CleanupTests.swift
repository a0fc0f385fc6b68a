import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Clean-up of expired rows")
struct CleanupTests {
    @Test(
        "Expired codes, counters, flows, ended sessions with their refresh chains and sent mail go; live ones stay",
        arguments: TestDatabase.available)
    func purge(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database) { $0.cleanupInterval = 0 }
        let housekeeping = Housekeeping(services: server.server.services)
        try await server.withRouter { client in
            // Ended: a user who logs out; counted: a wrong password; mailed: a recovery (a code and a sent mail).
            let leaving = try await signUp(client)
            #expect(try await client.json(.post, "/v1/logout", [:], bearer: leaving.accessToken).status == .noContent)
            _ = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": leaving.email, "password": "wrong password"])
            #expect(
                try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": leaving.email]).status
                    == .accepted)
            try await server.deliverMail()
            // Nothing is old enough yet.
            #expect(try await housekeeping.run().isEmpty)

            // 31 days on, a user who keeps refreshing stays signed in across the clean-up.
            server.clock.advance(by: 31 * 24 * 3600)
            let staying = try await signUp(client)
            let purged = try await housekeeping.run()
            #expect(purged[.sessions] == 1, "\(purged)")
            #expect((purged[.attemptCounters] ?? 0) >= 1, "\(purged)")
            #expect((purged[.oneTimeCodes] ?? 0) >= 1, "\(purged)")
            #expect(purged[.outbox] == 1, "\(purged)")
            let next = try await refresh(client, staying.refreshToken)
            #expect(next.status == .ok)
            #expect(try await client.json(.get, "/v1/me", bearer: staying.accessToken).status == .ok)
            // A second pass finds nothing more.
            #expect(try await housekeeping.run().isEmpty)
        }
    }
}
