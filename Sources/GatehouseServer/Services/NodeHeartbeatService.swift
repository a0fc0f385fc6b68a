import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import ServiceLifecycle

/// Tells the database every 30 s that this node is alive and which schema it runs, and says goodbye
/// on shutdown: what lets a migration that removes something wait until no node needs it
/// (`MigrationBlocked`) and `gatehouse migrate --check` list the nodes. Wall time, not the server's
/// clock: liveness is compared with the migrating process's own time.
///
/// Each beat also reads which schemas the live nodes run: while one of an older release is alive,
/// sessions start on token rows it can refresh (`RefreshChainGate`).
struct NodeHeartbeatService: Service {
    let persistence: SQLPersistence
    let chains: RefreshChainGate
    let logger: Logger

    func run() async throws {
        let id = UUID()
        let host = ProcessInfo.processInfo.hostName
        let started = Date()
        @Sendable func beat() async {
            do {
                try await persistence.heartbeat(node: id, host: host, startedAt: started, now: Date())
                let allowed = try await persistence.refreshChainsAllowed(now: Date())
                if allowed != chains.isOpen {
                    logger.notice(
                        allowed
                            ? "every live node runs refresh chains: sessions start on one"
                            : "a node of an older release is alive: sessions start with refresh-token rows it can refresh")
                    chains.set(open: allowed)
                }
            } catch {
                logBackgroundFailure("node heartbeat failed", error, logger: logger)
            }
        }
        await beat()
        await runEvery(.seconds(30)) { await beat() }
        try? await persistence.leave(node: id)
    }
}
