import GatehouseCore

// swift-service-lifecycle names each service by `"\(service)"` and logs that name at debug level
// ("Starting service", sl-service=…). The default description reflects every stored property, and the
// outbox and clean-up services hold all of `CoreServices`: half a MiB of log line per start, a fifth of
// the start's CPU, and every setting in it, the bot challenge's siteverify secret included. So each
// service the server runs is named by its type alone (LOG-2).

extension KeyReloadService: CustomStringConvertible {
    var description: String { "KeyReloadService" }
}

extension NodeHeartbeatService: CustomStringConvertible {
    var description: String { "NodeHeartbeatService" }
}

extension OutboxDispatcherService: CustomStringConvertible {
    var description: String { "OutboxDispatcherService" }
}

extension CleanupService: CustomStringConvertible {
    var description: String { "CleanupService" }
}

extension OTLPExporter: CustomStringConvertible {
    var description: String { "OTLPExporter" }
}
