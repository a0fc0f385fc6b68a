import GatehouseCore
import Logging
import ServiceLifecycle

/// Runs ``Housekeeping`` now and then: expired codes, counters and flows, ended sessions and their
/// refresh chains, and sent mail (which keeps its recipient) do not pile up for ever.
struct CleanupService: Service {
    let housekeeping: Housekeeping
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await runEvery(interval) {
            do {
                let purged = try await housekeeping.run()
                if !purged.isEmpty {
                    logger.info(
                        "cleaned up expired rows",
                        metadata: Logger.Metadata(uniqueKeysWithValues: purged.map { ($0.key.rawValue, .stringConvertible($0.value)) }))
                }
            } catch {
                logBackgroundFailure("clean-up failed", error, logger: logger)
            }
        }
    }
}
