import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into the contract's shape: problem documents, or RFC 6749 errors under `/oauth`.
/// Unexpected errors become a 500 whose details go to the log only. Also sets the headers every answer
/// carries.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = Self.response(for: error, path: request.uri.path, logger: context.logger)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[values: HTTPField.Name("Request-Id")!] = [context.id]
        return response
    }

    static func response(for error: any Error, path: String, logger: Logger) -> Response {
        let oauth = path.hasPrefix("/oauth/")
        switch error {
        case let error as OAuthError:
            return Responses.oauth(error)
        case let error as GatehouseError:
            if let cause = error.cause { logger.debug("request failed", metadata: ["cause": "\(type(of: cause))"]) }
            guard oauth else { return Responses.problem(error) }
            return Responses.oauth(OAuthError(
                status: error.status, error: oauthCode(for: error), description: error.detail, retryAfter: error.retryAfter))
        case let error as HTTPError:
            let gatehouse = translate(error)
            return oauth ? Responses.oauth(OAuthError(status: gatehouse.status, error: "invalid_request", description: gatehouse.detail)) : Responses.problem(gatehouse)
        default:
            // Type and message only: driver errors can echo query text.
            logger.error("unexpected error", metadata: ["error_type": "\(type(of: error))", "path": "\(path)"])
            let unexpected = GatehouseError(status: 500, code: .internalError, title: "Internal error", detail: "Something went wrong on our side.")
            return oauth ? Responses.oauth(OAuthError(status: 500, error: "server_error")) : Responses.problem(unexpected)
        }
    }

    private static func oauthCode(for error: GatehouseError) -> String {
        switch error.status {
        case 503: "temporarily_unavailable"
        case 401: "invalid_client"
        default: error.code == .invalidClient ? "invalid_client" : "invalid_request"
        }
    }

    private static func translate(_ error: HTTPError) -> GatehouseError {
        switch error.status {
        case .notFound:
            return GatehouseError(status: 404, code: .notFound, title: "Not found", detail: "No such route.")
        case .methodNotAllowed:
            return GatehouseError(status: 405, code: .methodNotAllowed, title: "Method not allowed", detail: "This route does not take that method.")
        case .contentTooLarge:
            return RequestDecoding.tooLarge
        default:
            let status = error.status.code
            return GatehouseError(
                status: status, code: status >= 500 ? .internalError : .invalidRequest,
                title: error.status.reasonPhrase, detail: status >= 500 ? nil : error.body)
        }
    }
}
