import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Service lifecycle logs")
struct ServiceLogTests {
    @Test(
        "LOG-2: what swift-service-lifecycle logs at debug level when the server's services start names each by its type and holds none of the server's settings: not the bot challenge's siteverify secret"
    )
    func servicesAreNamedNotReflected() async throws {
        let logs = CapturedLogs()
        let secret = "siteverify-secret-\(UUID().uuidString)"
        let server = try await TestServer.start(.sqlite, logs: logs) {
            $0.botChallenge = BotChallengeService(kind: .turnstile, siteKey: "0x4AAAAAAAlogs", secret: secret)
        }
        try await server.withLive { client in
            let live = try await client.json(.get, "/health/live")
            #expect(live.status == .ok)
        }
        let started = logs.all.filter { $0.contains("sl-service=") }
        #expect(started.contains { $0.contains("sl-service=CleanupService") }, "\(started)")
        #expect(!started.isEmpty)
        #expect(started.allSatisfy { $0.count < 400 }, "\(started.map(\.count))")
        #expect(!logs.all.contains { $0.contains(secret) })
        // Nor does a reflection of everything the flows share, which holds the service.
        #expect(!String(describing: server.server.services).contains(secret))
        #expect(!String(reflecting: server.server.services).contains(secret))
    }
}
