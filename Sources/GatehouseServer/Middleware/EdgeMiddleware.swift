import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// Parsed once, not per response.
private let requestIDField = HTTPField.Name("Request-Id")!

/// The first thing every request meets: resolves once who is calling from where (address, user agent,
/// languages), so no handler re-derives it or needs to know whether a proxy is trusted, and stamps the
/// headers every answer carries (`nosniff`, the request id the log lines carry too) on successes and
/// rendered errors alike. It also counts the request (``RequestMetrics``) and writes its access log
/// line: method, path without the query (links carry tokens there), status, duration, never headers
/// or bodies. One layer for all of it: each router layer costs every request an async frame and a
/// context copy, and a bare route's cost is what the read paths are measured against.
struct EdgeMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let trustForwardedFor: Bool
    let cors: CORSPolicy
    var metrics = RequestMetrics()

    func handle(
        _ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response
    ) async throws -> Response {
        let inFlight = metrics.started(request.method)
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await answer(request, context: context, next: next)
        } catch {
            metrics.threw(inFlight, route: context.endpointPath, error: error)
            throw error
        }
        metrics.answered(inFlight, route: context.endpointPath, status: response.status)
        let elapsed = ContinuousClock.now - start
        context.logger.debug(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)",
            ])
        return response
    }

    private func answer(
        _ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        // Read once: `context.id` formats the logger's metadata value on every access.
        let requestID = context.id
        context.meta = RequestMeta(request: request, remoteAddress: context.remoteAddress, trustForwardedFor: trustForwardedFor)
        context.meta.requestID = requestID
        // Only requests that carry `Origin` (browsers, cross-origin) pay for the lookup.
        let origin = await cors.allowedOrigin(of: request)
        var response: Response
        if let origin, let preflight = cors.preflight(request, origin: origin) {
            response = preflight
        } else {
            response = try await next(request, context)
            if let origin { cors.decorate(&response, origin: origin) }
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[values: requestIDField] = [requestID]
        return response
    }
}

extension RequestMeta {
    init(request: Request, remoteAddress: String?, trustForwardedFor: Bool) {
        var ip = remoteAddress
        // The rightmost entry is the one our proxy appended; entries left of it are the client's to forge.
        if trustForwardedFor, let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!],
            let last = forwarded.split(separator: ",").last
        {
            let candidate = last.trimmingCharacters(in: .whitespaces)
            if candidate.count <= 45, candidate.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }) { ip = candidate }
        }
        self.init(
            ipAddress: ip, userAgent: request.headers[.userAgent],
            acceptLanguage: request.headers[.acceptLanguage].map { String($0.prefix(128)) })
        botChallengeToken = request.headers[Self.botChallengeHeader]
    }

    /// The bot challenge widget's token, from apps (``BotChallenge``).
    static let botChallengeHeader = HTTPField.Name("Gatehouse-Bot-Challenge")!
}
