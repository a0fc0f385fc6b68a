import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The admin API writes ids the way tokens and the user's own API do.
@Suite("Admin identifiers")
struct AdminIdentifierCaseTests {
    @Test(
        "AD-10: the admin API's session list, the user export and the audit log write session and event ids in lowercase, so a token's sid matches the admin session list without case-folding and the session can be revoked by that id"
    )
    func lowercaseIdentifiers() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let claims = try decodeClaims(user.accessToken)
            let sid = try #require(claims["sid"] as? String)
            let userID = try #require(claims["sub"] as? String)
            #expect(sid == sid.lowercased())
            let admin = try await adminToken(server, client, id: "ops", scopes: ["admin"])

            let sessions = try await client.json(.get, "/admin/v1/users/\(userID)/sessions", bearer: admin)
            let ids = (sessions.object["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(ids.contains(sid), "\(sessions.text)")
            let export = try await client.json(.get, "/admin/v1/users/\(userID)/export", bearer: admin)
            let exported = (export.object["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(exported.contains(sid), "\(export.text.prefix(400))")
            let audit = try await client.json(.get, "/admin/v1/audit", bearer: admin)
            let events = (audit.object["events"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(!events.isEmpty && events.allSatisfy { $0 == $0.lowercased() && UUID(uuidString: $0) != nil }, "\(events)")

            #expect(try await client.json(.delete, "/admin/v1/sessions/\(sid)", bearer: admin).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .unauthorized)
        }
    }
}
