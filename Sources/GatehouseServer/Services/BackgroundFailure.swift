import GatehouseCore
import Logging

/// A background service's failed round, logged: a storage fault is logged once per episode where it
/// began, so a service polling every second during an outage adds nothing to the log but debug lines.
func logBackgroundFailure(_ message: Logger.Message, _ error: any Error, logger: Logger) {
    if let error = error as? GatehouseError, error.category == .unavailable {
        logger.debug(message, metadata: ["error": "storage unavailable"])
    } else {
        logger.warning(message, metadata: ["error_type": "\(type(of: error))"])
    }
}
