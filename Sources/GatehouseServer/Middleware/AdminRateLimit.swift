import GatehouseCore
import Hummingbird

/// Counts each admin API or console request against the `admin` limit of the credential that made
/// it (the admin client's id, or `console:` and the operator's name), after authentication so that a
/// stranger cannot spend an operator's budget; 429 with `Retry-After` past it.
struct AdminRateLimit: RouterMiddleware {
    typealias Context = AdminContext
    let limiter: RateLimiter
    let persistence: any Persistence
    let clock: any WallClock

    init(services: CoreServices) {
        self.limiter = services.rateLimits
        self.persistence = services.persistence
        self.clock = services.clock
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let who = (context.admin.isConsole ? "console:" : "client:") + context.admin.clientID
        try await limiter.consume(.admin, key: who, persistence: persistence, now: clock.now())
        return try await next(request, context)
    }
}
