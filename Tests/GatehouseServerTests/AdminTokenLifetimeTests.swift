import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// An admin credential lasts no longer than the client that holds it.
@Suite("Admin tokens and their client")
struct AdminTokenLifetimeTests {
    @Test(
        "AD-9: an admin token stops working as soon as its client loses the admin scope (401) or is deleted (401), from the CLI's ClientAdmin as from the API, well before the token expires; another admin client's token keeps working"
    )
    func tokenFollowsClient() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let ops = try await adminToken(server, client, id: "ops", scopes: ["admin:clients"])
            let other = try await adminToken(server, client, id: "other-ops", scopes: ["admin:clients"])
            #expect(try await client.json(.get, "/admin/v1/clients", bearer: ops).status == .ok)

            // The CLI takes the scope away: the token, though unexpired, no longer opens anything.
            let admin = ClientAdmin(persistence: server.persistence, clock: server.clock, cache: server.services.clientCache)
            _ = try await admin.update(id: "ops", settings: [], scopes: ["openid"])
            let narrowed = try await client.json(.get, "/admin/v1/clients", bearer: ops)
            #expect(narrowed.status == .unauthorized, "\(narrowed.text)")
            _ = try await admin.update(id: "ops", settings: [], scopes: ["admin:clients"])
            #expect(try await client.json(.get, "/admin/v1/clients", bearer: ops).status == .ok)

            // Deleted through the API by the other credential: the deleted client's token is refused.
            let deleted = try await client.json(.delete, "/admin/v1/clients/ops", bearer: other)
            #expect(deleted.status == .noContent, "\(deleted.text)")
            let gone = try await client.json(.get, "/admin/v1/clients", bearer: ops)
            #expect(gone.status == .unauthorized && gone.text.contains("no longer exists"), "\(gone.text)")
            #expect(try await client.json(.get, "/admin/v1/clients", bearer: other).status == .ok)
        }
    }
}
