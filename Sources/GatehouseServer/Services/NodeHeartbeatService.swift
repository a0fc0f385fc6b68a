import Foundation
import GatehouseStore
import Logging
import ServiceLifecycle

/// Tells the database every 30 s that this node is alive and which schema it runs, and says goodbye
/// on shutdown: what lets a migration that removes something wait until no node needs it
/// (`MigrationBlocked`) and `gatehouse migrate --check` list the nodes. Wall time, not the server's
/// clock: liveness is compared with the migrating process's own time.
struct NodeHeartbeatService: Service {
    let persistence: SQLPersistence
    let logger: Logger

    func run() async throws {
        let id = UUID()
        let host = ProcessInfo.processInfo.hostName
        let started = Date()
        @Sendable func beat() async {
            do {
                try await persistence.heartbeat(node: id, host: host, startedAt: started, now: Date())
            } catch {
                logBackgroundFailure("node heartbeat failed", error, logger: logger)
            }
        }
        await beat()
        await runEvery(.seconds(30)) { await beat() }
        try? await persistence.leave(node: id)
    }
}
