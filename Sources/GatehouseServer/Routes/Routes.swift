import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The route table: every route, its middleware and its authentication, in one readable place.
struct Routes {
    let server: GatehouseServer

    func register(on router: Router<AppRequestContext>) {
        let services = server.services
        // Metrics outermost so it counts the status the client saw, not the error thrown inside.
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: AccessLogMiddleware())
        router.add(middleware: ErrorMiddleware())

        let accounts = AccountRoutes(services: services, trustForwardedFor: server.configuration.trustForwardedFor)
        router.post("/v1/signup", use: accounts.signup)
        router.post("/v1/login", use: accounts.login)

        let verification = VerificationRoutes(services: services, trustForwardedFor: server.configuration.trustForwardedFor)
        router.post("/v1/verification", use: verification.resend)
        router.post("/v1/verify", use: verification.verify)
        router.post("/v1/recovery", use: verification.requestRecovery)
        router.post("/v1/recovery/verify", use: verification.verifyRecovery)

        let passwordless = PasswordlessRoutes(services: services, trustForwardedFor: server.configuration.trustForwardedFor)
        router.post("/v1/otp", use: passwordless.send)
        router.post("/v1/otp/verify", use: passwordless.verify)
        router.get("/v1/identifiers/status", use: passwordless.identifierStatus)
        router.get("/v1/terms", use: passwordless.showTerms)
        router.get("/v1/required-fields", use: passwordless.requiredFields)
        router.get("/v1/client", use: passwordless.client)

        let pages = PageRoutes(services: services, catalog: server.templates, trustForwardedFor: server.configuration.trustForwardedFor)
        router.get("/verify", use: pages.verify)
        router.get("/reset", use: pages.resetForm)
        router.post("/reset", use: pages.reset)

        let authenticated = router.group("/v1")
            .add(middleware: BearerMiddleware(authenticator: BearerAuthenticator(services: services)))
            .group(context: AuthenticatedContext.self)
        let me = MeRoutes(services: services, trustForwardedFor: server.configuration.trustForwardedFor)
        authenticated.post("logout", use: me.logout)
        authenticated.get("me", use: me.show)
        authenticated.patch("me", use: me.update)
        authenticated.put("me/password", use: me.changePassword)
        authenticated.get("me/sessions", use: me.sessions)
        authenticated.delete("me/sessions/:id", use: me.revokeSession)
        authenticated.get("me/agreements", use: passwordless.agreements)
        authenticated.post("me/agreements", use: passwordless.accept)
        authenticated.get("me/required-fields", use: passwordless.missingFields)

        let oauth = OAuthRoutes(services: services)
        router.post("/oauth/token", use: oauth.token)
        router.post("/oauth/revoke", use: oauth.revoke)
        router.post("/oauth/introspect", use: oauth.introspect)

        let discovery = DiscoveryRoutes(server: server)
        router.get("/.well-known/openid-configuration", use: discovery.openIDConfiguration)
        router.get("/.well-known/jwks.json", use: discovery.jwks)

        let operations = OperationsRoutes(server: server)
        router.get("/health/live", use: operations.live)
        router.get("/health/ready", use: operations.ready)
        router.get("/metrics", use: operations.metrics)
        router.get("/openapi.yaml", use: operations.openAPI)
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
    }
}

extension Request {
    /// `client_id` from the body, else the `Gatehouse-Client` header.
    func clientID(body: String?) -> String? {
        if let body, !body.isEmpty { return body }
        return headers[HTTPField.Name("Gatehouse-Client")!]
    }
}
