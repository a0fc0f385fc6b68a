import GatehouseCore
import Hummingbird
import ServiceLifecycle

// Apart from GatehouseServer.swift so the server's parts do not depend on the routes that use them.
extension GatehouseServer {
    /// The HTTP application, with background services attached. `maintenance: false` leaves out the
    /// periodic work (signing-key reload, node heartbeat, outbox dispatch, clean-up, memory trim): for tests that
    /// drive the router for seconds, where none of it falls due, and where Hummingbird's router test
    /// framework would otherwise run a service group per test, trapping SIGTERM and SIGINT with two
    /// libdispatch signal sources each (see `TestServer.withRouter`).
    public func makeApplication(maintenance: Bool = true) -> some ApplicationProtocol {
        // HEAD answers like GET without the body (RFC 9110 §9.3.2), as `Allow` says it does.
        let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
        var backgroundServices: [any Service] = []
        if let traceExporter { backgroundServices.append(traceExporter) }
        if maintenance {
            backgroundServices += [
                KeyReloadService(keys: keys, logger: services.logger),
                NodeHeartbeatService(persistence: persistence, chains: services.refreshChains, logger: services.logger),
                MemoryTrimService(interval: .seconds(60)),
            ]
            if configuration.runOutboxDispatcher {
                backgroundServices.append(OutboxDispatcherService(delivery: delivery, idleInterval: .seconds(1), logger: services.logger))
            }
            if configuration.cleanupInterval > 0 {
                backgroundServices.append(
                    CleanupService(
                        housekeeping: Housekeeping(services: services),
                        interval: .milliseconds(Int64(configuration.cleanupInterval * 1000)), logger: services.logger))
            }
        }
        Routes(server: self).register(on: router)
        return Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [HeaderOverflowHandler()],
                    // A connection that sends nothing for this long is closed: idle keep-alives and stalled
                    // clients do not hold sockets for ever.
                    idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: backgroundServices,
            // Start-up is over once the server listens: the code only it ran leaves the RSS.
            onServerRunning: { _ in if maintenance { CodePages.release() } },
            logger: services.logger)
    }
}
