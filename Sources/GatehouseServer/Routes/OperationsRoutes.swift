import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

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
        } catch {
            context.logger.warning("readiness check failed", metadata: ["error_type": "\(type(of: error))"])
            return ProblemRenderer.response(.notReady("The database is unreachable or not migrated."))
        }
    }

    @Sendable func metrics(_ request: Request, context: AppRequestContext) async throws -> Response {
        Responses.raw(Data(server.metrics.emit()), contentType: "text/plain; version=0.0.4; charset=utf-8")
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
