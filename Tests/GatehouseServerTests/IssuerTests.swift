import Foundation
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HummingbirdTesting
import Testing

/// Nodes of one database must issue tokens under one name.
@Suite("Shared issuer")
struct IssuerTests {
    @Test(
        "A second node with another public URL refuses to start on PostgreSQL, unless told to change the issuer",
        .enabled(if: TestDatabase.postgresURL != nil))
    func mismatchRefused() async throws {
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("gh-issuer-\(UUID())")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: shared) }
        let secret = shared.appendingPathComponent("secret").path
        let first = try await TestServer.startOpen(.postgres) {
            $0.secretFile = secret
            $0.publicURL = "https://id.example.com"
        }
        let url = first.server.configuration.databaseURL
        do {
            // As the README's old two-node set-up did: each node its own default address.
            await #expect(throws: IssuerMismatch.self) {
                let second = try await TestServer.start(.postgres) {
                    $0.databaseURL = url
                    $0.secretFile = secret
                    $0.publicURL = "http://127.0.0.1:8081"
                }
                await second.stop()
            }
            // The same address starts.
            let same = try await TestServer.start(.postgres) {
                $0.databaseURL = url
                $0.secretFile = secret
                $0.publicURL = "https://id.example.com"
            }
            await same.stop()
            // A deliberate change is taken, and then it is the one the others must match.
            let moved = try await TestServer.start(.postgres) {
                $0.databaseURL = url
                $0.secretFile = secret
                $0.publicURL = "https://login.example.com"
                $0.allowIssuerChange = true
            }
            await moved.stop()
            await #expect(throws: IssuerMismatch.self) {
                let old = try await TestServer.start(.postgres) {
                    $0.databaseURL = url
                    $0.secretFile = secret
                    $0.publicURL = "https://id.example.com"
                }
                await old.stop()
            }
        } catch {
            await first.stop()
            throw error
        }
        await first.stop()
    }

    @Test("On SQLite (one node) a changed public URL is taken")
    func sqliteChange() async throws {
        let first = try await TestServer.start(.sqlite) { $0.publicURL = "https://id.example.com" }
        let url = first.server.configuration.databaseURL
        let secret = first.server.configuration.secretFile
        await first.server.shutdown()
        let second = try await TestServer.start(.sqlite) {
            $0.databaseURL = url
            $0.secretFile = secret
            $0.publicURL = "https://login.example.com"
        }
        await second.stop()
        await first.stop()
    }
}
