import GatehouseCore
import HTTPTypes
import Hummingbird

/// Cross-origin access for browser apps whose origin a client registered (`allowed_origins`), and
/// nothing for any other origin: a preflight from an unknown origin gets the ordinary answer (405),
/// and no response names an origin that was not registered. Credentials are bearer tokens, never
/// cookies, so `Access-Control-Allow-Credentials` is never sent. Applied by ``EdgeMiddleware`` (one
/// router layer fewer than a middleware of its own), outside the error renderers, so error answers
/// are readable by the app too.
struct CORSPolicy: Sendable {
    let origins: AllowedOrigins

    static let origin = HTTPField.Name("Origin")!
    static let allowOrigin = HTTPField.Name("Access-Control-Allow-Origin")!
    static let allowMethods = HTTPField.Name("Access-Control-Allow-Methods")!
    static let allowHeaders = HTTPField.Name("Access-Control-Allow-Headers")!
    static let exposeHeaders = HTTPField.Name("Access-Control-Expose-Headers")!
    static let maxAge = HTTPField.Name("Access-Control-Max-Age")!
    static let requestMethod = HTTPField.Name("Access-Control-Request-Method")!
    static let vary = HTTPField.Name("Vary")!

    /// The registered origin the request comes from, if any.
    func allowedOrigin(of request: Request) async -> String? {
        guard let origin = request.headers[Self.origin], await origins.allows(origin) else { return nil }
        return origin
    }

    /// The answer to a preflight from an allowed origin; nil for any other request.
    func preflight(_ request: Request, origin: String) -> Response? {
        guard request.method == .options, request.headers[Self.requestMethod] != nil else { return nil }
        var headers: HTTPFields = [:]
        headers[Self.allowOrigin] = origin
        headers[Self.allowMethods] = "GET, POST, PUT, PATCH, DELETE"
        headers[Self.allowHeaders] = "Authorization, Content-Type, Gatehouse-Client, Accept-Language, DPoP, Gatehouse-Bot-Challenge"
        headers[Self.maxAge] = "600"
        headers[Self.vary] = "Origin"
        return Response(status: .noContent, headers: headers)
    }

    func decorate(_ response: inout Response, origin: String) {
        response.headers[Self.allowOrigin] = origin
        response.headers[Self.exposeHeaders] = "Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Request-Id, DPoP-Nonce"
        response.headers.append(HTTPField(name: Self.vary, value: "Origin"))
    }
}
