import GatehouseCore
import Logging
import ServiceLifecycle

/// Runs the outbox delivery on every node: polls while there is work, waits a moment when there is
/// none. Several nodes share the work through the claim's lease (and SKIP LOCKED on PostgreSQL).
struct OutboxDispatcherService: Service {
    let delivery: OutboxDelivery
    let idleInterval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            var handled = 0
            do {
                handled = try await delivery.runOnce()
            } catch {
                logBackgroundFailure("outbox poll failed", error, logger: logger)
            }
            if handled == 0 {
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: idleInterval) }
                } catch {
                    break
                }
            }
        }
    }
}
