import GatehouseCore
import Logging
import ServiceLifecycle

/// Reloads signing keys every minute, so a `keys rotate` run on another node or by the CLI reaches
/// this one without a restart.
struct KeyReloadService: Service {
    let keys: SigningKeys
    let logger: Logger

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            // Ends at once on graceful shutdown instead of holding it up for a minute.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
            } catch {
                break
            }
            do {
                try await keys.load()
            } catch {
                logger.warning("signing key reload failed", metadata: ["error_type": "\(type(of: error))"])
            }
        }
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
