import GatehouseCore
import HTTPTypes
import Hummingbird

/// Turns a core error into the answer a route group speaks: problem JSON for `/v1`, OAuth JSON for
/// `/oauth`, HTML for pages, a redirect for the authorization endpoint. Chosen per group when routes
/// are registered, never by looking at the URL.
protocol ErrorRenderer: Sendable {
    func render(_ error: GatehouseError, request: Request) -> Response
}

/// The HTTP status a category means, shared by the renderers that answer with a status of their own.
enum HTTPStatusMapping {
    static func status(for category: GatehouseError.Category) -> HTTPResponse.Status {
        switch category {
        case .badRequest, .oauth: .badRequest
        case .validation: .unprocessableContent
        case .unauthenticated, .clientAuthentication: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .gone: .gone
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internalFailure: .internalServerError
        }
    }
}
