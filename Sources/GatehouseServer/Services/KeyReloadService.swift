import GatehouseCore
import Logging
import ServiceLifecycle

/// Reloads signing keys every minute, so a `keys rotate` run on another node or by the CLI reaches
/// this one without a restart.
struct KeyReloadService: Service {
    let keys: SigningKeys
    let logger: Logger

    func run() async throws {
        await runEvery(.seconds(60)) {
            do {
                try await keys.load()
            } catch {
                logBackgroundFailure("signing key reload failed", error, logger: logger)
            }
        }
    }
}

/// Waits `interval`, runs `body`, and again, until the service is cancelled or shuts down; a
/// graceful shutdown ends the wait at once instead of holding it up for a whole interval.
func runEvery(_ interval: Duration, _ body: () async -> Void) async {
    while !Task.isCancelledOrShuttingDown {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        } catch {
            return
        }
        await body()
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
