import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird
import Logging

/// Health, metrics and the API description.
struct OperationsRoutes: Sendable {
    let server: GatehouseServer

    @Sendable func live(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Responses.json(["status": "ok"])
    }

    @Sendable func ready(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            try await server.persistence.ping()
            return try Responses.json(["status": "ready"])
        } catch let error as GatehouseError where error.category == .unavailable {
            // The storage's episode is logged once where it began, not at every probe.
            context.logger.debug("readiness check failed: storage unavailable")
            return ProblemRenderer.response(.notReady("The database does not accept writes."))
        } catch let error as SchemaTooNew {
            // A newer release removed what this one uses: say so, since only replacing this node helps.
            context.logger.error("readiness check failed", metadata: ["reason": "\(error)"])
            return ProblemRenderer.response(.notReady("The database was migrated by a newer release this node cannot serve."))
        } catch {
            context.logger.warning("readiness check failed", metadata: ["error_type": "\(type(of: error))"])
            return ProblemRenderer.response(.notReady("The database is unreachable or not migrated."))
        }
    }

    /// Per-route counts tell an outsider what the server is doing: with a token configured it is
    /// required; without one only a caller on this machine that came through no proxy is answered.
    @Sendable func metrics(_ request: Request, context: AppRequestContext) async throws -> Response {
        if let token = server.configuration.metricsToken {
            let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            guard let presented, Secrets.constantTimeEquals(presented, token) else {
                throw GatehouseError.unauthorized("/metrics requires the metrics token.", code: .unauthorized)
            }
        } else {
            let proxied = request.headers[HTTPField.Name("X-Forwarded-For")!] != nil || request.headers[HTTPField.Name("Forwarded")!] != nil
            guard !proxied, let peer = context.remoteAddress, Loopback.contains(peer) else {
                throw GatehouseError.forbidden("/metrics answers only this machine unless GATEHOUSE_METRICS_TOKEN is set.")
            }
        }
        return Responses.raw(Data(server.metrics.emit()), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    @Sendable func openAPI(_ request: Request, context: AppRequestContext) async throws -> Response {
        Responses.raw(OpenAPIDocument.data, contentType: "application/yaml", cacheSeconds: 3600)
    }
}

/// The OpenAPI document shipped as a resource.
enum OpenAPIDocument {
    static let data: Data = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return Data() }
        return data
    }()
}
