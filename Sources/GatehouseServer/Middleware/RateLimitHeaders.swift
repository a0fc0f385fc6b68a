import GatehouseCore
import HTTPTypes
import Hummingbird

private let rateLimitPolicyField = HTTPField.Name("RateLimit-Policy")!
private let rateLimitField = HTTPField.Name("RateLimit")!

/// Put on the routes whose flows count request rates (`RateLimiter`), in the route table: whatever the
/// limits count on the way (in flows that know nothing of HTTP) comes back as `RateLimit-Policy` and
/// `RateLimit` headers, on the answer and on a refusal alike. Only these routes bind a report: binding
/// one for every request cost the cheapest routes (JWKS, introspection) about a tenth of their
/// throughput.
struct RateLimitHeaders<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let report = RateLimitReport()
        do {
            var response = try await RateLimitReport.$current.withValue(report) { try await next(request, context) }
            for field in Self.fields(report) { response.headers[field.name] = field.value }
            return response
        } catch {
            // The group's error renderer answers; the headers go with its answer.
            throw ErrorWithHeaders(error: error, headers: Self.fields(report))
        }
    }

    static func fields(_ report: RateLimitReport) -> HTTPFields {
        let entries = report.entries
        guard !entries.isEmpty else { return [:] }
        return [rateLimitPolicyField: RateLimitReport.policyField(entries), rateLimitField: RateLimitReport.stateField(entries)]
    }
}

/// An error on its way to the group's ``ErrorMiddleware``, with headers its rendered answer must carry.
struct ErrorWithHeaders: Error {
    let error: any Error
    let headers: HTTPFields
}
