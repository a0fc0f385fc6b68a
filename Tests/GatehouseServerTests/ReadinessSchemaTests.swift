import Foundation
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Readiness during a rolling upgrade, over HTTP: what a load balancer sees of a node whose database
/// a newer release migrated.
@Suite("Readiness across releases")
struct ReadinessSchemaTests {
    @Test(
        "MIG-4: /health/ready stays 200 on a newer schema that only adds and answers 503 naming the cause once a newer migration removes what this release uses"
    )
    func readinessOnNewerSchema() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let release = SQLPersistence.schemaVersion
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try await server.withRouter { client in
            #expect(try await client.json(.get, "/health/ready").status == .ok)
            try await server.server.persistence.executeRaw([
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(release + 1), 'adds', \(now))"
            ])
            #expect(try await client.json(.get, "/health/ready").status == .ok)
            try await server.server.persistence.executeRaw([
                """
                INSERT INTO schema_migrations (version, name, applied_at, min_node_version)
                VALUES (\(release + 2), 'removes', \(now), \(release + 1))
                """
            ])
            let refused = try await client.json(.get, "/health/ready")
            #expect(refused.status == .serviceUnavailable && refused.text.contains("newer release"), "\(refused.text)")
            #expect(refused.headers[.retryAfter] != nil)
            // The requests themselves are not refused: readiness tells the load balancer, it does not stop the node.
            #expect(try await client.json(.get, "/.well-known/jwks.json").status == .ok)
        }
    }
}
