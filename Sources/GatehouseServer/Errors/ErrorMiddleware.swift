import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// Catches whatever a route group's handlers throw, makes it a ``GatehouseError`` and lets the group's
/// renderer answer. Unexpected errors become an internal failure whose details go to the log only.
/// The headers every answer carries are ``EdgeMiddleware``'s, set once outside all groups.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let renderer: any ErrorRenderer

    init(renderer: any ErrorRenderer) {
        self.renderer = renderer
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let wrapped as ErrorWithHeaders {
            var response = renderer.render(Self.normalize(wrapped.error, path: request.uri.path, logger: context.logger), request: request)
            for field in wrapped.headers { response.headers[field.name] = field.value }
            return response
        } catch let refusal as MethodNotAllowed {
            var response = renderer.render(.methodNotAllowed, request: request)
            response.headers[.allow] = refusal.allowHeader
            return response
        } catch {
            return renderer.render(Self.normalize(error, path: request.uri.path, logger: context.logger), request: request)
        }
    }

    static func normalize(_ error: any Error, path: String, logger: Logger) -> GatehouseError {
        switch error {
        case let error as GatehouseError:
            if let cause = error.cause { logger.debug("request failed", metadata: ["cause": "\(type(of: cause))"]) }
            return error
        case let error as any HTTPResponseError:
            return translate(error)
        default:
            // Type and message only: driver errors can echo query text.
            logger.error("unexpected error", metadata: ["error_type": "\(type(of: error))", "path": "\(path)"])
            return .internalFailure(cause: error)
        }
    }

    /// Hummingbird's and NIO's own refusals (routing, body limits) in the core's vocabulary.
    private static func translate(_ error: any HTTPResponseError) -> GatehouseError {
        let message = (error as? HTTPError)?.body
        switch error.status {
        case .notFound: return .notFound("No such route.")
        case .methodNotAllowed: return .methodNotAllowed
        case .contentTooLarge: return .payloadTooLarge
        case .unsupportedMediaType: return .unsupportedMediaType(message ?? "Unsupported media type.")
        default:
            return error.status.code >= 500 ? .internalFailure(cause: error) : .badRequest(message ?? error.status.reasonPhrase)
        }
    }
}
