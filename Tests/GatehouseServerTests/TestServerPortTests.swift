import Foundation
import GatehouseTesting
import Testing

/// The test servers' own behaviour: a port that is taken must fail the start, not hang the run.
@Suite("Test servers")
struct TestServerPortTests {
    @Test("A test server asked for a port another listener holds throws PortUnavailable instead of waiting forever")
    func takenPort() async throws {
        let holder = try await HookServer.start()
        defer { Task { await holder.stop() } }
        await #expect(throws: PortUnavailable.self) {
            let second = try await HookServer.start(port: holder.port)
            await second.stop()
        }
        // And the port allocator skips it.
        let free = try await HookServer.freePort()
        #expect(free != holder.port)
    }
}
