import HTTPTypes
import Hummingbird

/// The routes whose flows count request rates (`RateLimiter`). Only these get a `RateLimitReport`
/// bound by the edge: binding one for every request cost the cheapest routes (JWKS, introspection)
/// about a tenth of their throughput. A route that starts counting must be added here, or its
/// answers lose their `RateLimit` headers (`RateLimitTests` checks them route by route).
enum RateLimitedRoutes {
    static let paths: Set<String> = [
        "/v1/signup", "/v1/verification", "/v1/verify", "/v1/recovery", "/v1/recovery/verify", "/v1/otp",
        "/v1/otp/verify", "/v1/identifiers/status", "/oauth/token", "/v1/me/identities",
    ]

    static func counts(_ request: Request) -> Bool {
        (request.method == .post || request.method == .get)
            && (paths.contains(request.uri.path) || request.uri.path.hasPrefix("/v1/social/"))
    }
}
