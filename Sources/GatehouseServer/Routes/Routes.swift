import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The route table: every route, its middleware and its authentication, in one readable place.
struct Routes {
    let server: GatehouseServer

    /// Query parameters that may carry a secret or a user's identifier, kept out of traces.
    static let secretParameters: Set<String> = [
        "token", "code", "state", "nonce", "id_token_hint", "login_hint", "request", "code_challenge", "code_verifier", "client_secret",
        "refresh_token", "email", "phone",
    ]

    func register(on router: Router<AppRequestContext>) {
        let services = server.services
        // The edge outermost (after tracing) so its metrics count the status the client saw, not the
        // error thrown inside. The router-wide renderer is problem JSON: it answers for `/v1` and for unknown routes. Groups that
        // speak another shape (OAuth, pages) put their own renderer in front of it.
        if server.traceExporter != nil {
            // Outermost: the request's span holds everything, the access log line included. Query
            // parameters that carry secrets are recorded as REDACTED.
            router.add(middleware: TracingMiddleware(redactingQueryParameters: Self.secretParameters))
        }
        router.add(
            middleware: EdgeMiddleware(
                trustForwardedFor: server.configuration.trustForwardedFor, cors: CORSPolicy(origins: services.allowedOrigins)))
        router.add(middleware: ErrorMiddleware(renderer: ProblemRenderer()))

        // Public JSON API: problem documents (the router-wide renderer; no second layer per request).
        // Routes whose flows count request rates are registered on `limited`: their answers carry
        // `RateLimit-Policy` and `RateLimit` (`RateLimitTests` checks them route by route).
        // Both carry a DPoP proof's key to the flows that issue tokens.
        let proofs = DPoPProofMiddleware(verifier: services.dpop)
        let api = router.group("/v1").add(middleware: proofs)
        let limited = router.group("/v1").add(middleware: RateLimitHeaders()).add(middleware: proofs)
        let accounts = AccountRoutes(services: services)
        limited.post("signup", use: accounts.signup)
        api.post("login", use: accounts.login)

        let verification = VerificationRoutes(services: services)
        limited.post("verification", use: verification.resend)
        limited.post("verify", use: verification.verify)
        limited.post("recovery", use: verification.requestRecovery)
        limited.post("recovery/verify", use: verification.verifyRecovery)

        let passwordless = PasswordlessRoutes(services: services)
        limited.post("otp", use: passwordless.send)
        limited.post("otp/verify", use: passwordless.verify)
        limited.post("magic-link", use: passwordless.sendMagicLink)
        limited.post("magic-link/verify", use: passwordless.verifyMagicLink)
        let anonymous = AnonymousRoutes(services: services)
        limited.post("anonymous", use: anonymous.signIn)
        limited.get("identifiers/status", use: IdentifierRoutes(services: services).identifierStatus)

        let clientTerms = ClientTermsRoutes(services: services)
        api.get("terms", use: clientTerms.showTerms)
        api.get("required-fields", use: clientTerms.requiredFields)
        api.get("client", use: clientTerms.client)

        let social = SocialRoutes(services: services, catalog: server.templates)
        limited.post("social/:provider/token", use: social.token)

        let secondFactors = FactorRoutes(services: services)
        api.post("mfa/verify", use: secondFactors.verify)
        api.post("mfa/enrol", use: secondFactors.enrolPending)
        api.post("mfa/send", use: secondFactors.sendCode)
        api.post("mfa/passkey/options", use: secondFactors.passkeyOptions)

        let devices = AuthenticatorRoutes(services: services)
        api.post("authenticators/challenge", use: devices.challenge)
        api.post("authenticators/authenticate", use: devices.authenticate)
        // Passkeys: a challenge needs nothing guessable to answer (a registered key's signature), so,
        // like a device challenge, it is not counted per address; its flow expires in five minutes.
        let passkeys = PasskeyRoutes(services: services)
        api.post("passkeys/authentication/options", use: passkeys.authenticationOptions)
        api.post("passkeys/authentication", use: passkeys.authenticate)

        // The signed-in user's API: a user's bearer token, checked before the handler runs.
        let me = router.group("/v1")
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    BearerTokenAuthenticator(bearer: BearerAuthenticator(services: services))
                ])
            )
            .group(context: AuthenticatedContext.self)
        let account = MeRoutes(services: services)
        me.post("logout", use: account.logout)
        me.get("me", use: account.show)
        me.patch("me", use: account.update)
        me.put("me/password", use: account.changePassword)
        me.post("me/upgrade", use: anonymous.upgrade)
        me.post("me/upgrade/code", use: anonymous.sendCode)
        me.post("me/upgrade/verify", use: anonymous.verifyCode)
        me.get("me/sessions", use: account.sessions)
        me.delete("me/sessions/:id", use: account.revokeSession)
        me.get("me/agreements", use: clientTerms.agreements)
        me.post("me/agreements", use: clientTerms.accept)
        me.get("me/required-fields", use: clientTerms.missingFields)
        me.post("me/authenticators", use: devices.register)
        me.get("me/authenticators", use: devices.list)
        me.delete("me/authenticators/:id", use: devices.delete)
        me.get("me/factors", use: secondFactors.list)
        me.post("me/factors/totp", use: secondFactors.enrolTOTP)
        me.post("me/factors/recovery-codes", use: secondFactors.regenerateRecoveryCodes)
        me.post("me/factors/:id/confirm", use: secondFactors.confirm)
        me.delete("me/factors/:id", use: secondFactors.remove)
        me.post("passkeys/registration/options", use: passkeys.registrationOptions)
        me.post("passkeys/registration", use: passkeys.register)
        me.get("me/passkeys", use: passkeys.list)
        me.patch("me/passkeys/:id", use: passkeys.rename)
        me.delete("me/passkeys/:id", use: passkeys.remove)
        let webSessions = WebSessionRoutes(services: services, catalog: server.templates)
        me.post("web-session", use: webSessions.create)
        let userInfo = UserInfoRoutes(services: services)
        me.get("me/consents", use: userInfo.listConsents)
        me.delete("me/consents/:client_id", use: userInfo.revokeConsent)
        let identities = IdentityRoutes(services: services)
        let meLimited = router.group("/v1")
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    BearerTokenAuthenticator(bearer: BearerAuthenticator(services: services))
                ])
            )
            .add(middleware: RateLimitHeaders())
            .group(context: AuthenticatedContext.self)
        meLimited.get("me/identities", use: identities.list)
        meLimited.post("me/identities", use: identities.link)
        me.delete("me/identities/:id", use: identities.unlink)
        meLimited.get("me/identities/:id/token", use: identities.providerToken)

        // Operators' API: an admin credential (a client_credentials token with an admin scope), never a
        // user's session; each handler checks the scope its area needs.
        let admin = router.group("/admin/v1")
            .add(middleware: RateLimitHeaders())
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    AdminCredentialAuthenticator(admin: AdminAuthenticator(services: services))
                ])
            )
            .group(context: AdminContext.self)
            .add(middleware: AdminRateLimit(services: services))
        let adminUsers = AdminUserRoutes(services: services)
        admin.get("users", use: adminUsers.search)
        admin.post("users", use: adminUsers.create)
        admin.get("users/:id", use: adminUsers.show)
        admin.patch("users/:id", use: adminUsers.update)
        admin.delete("users/:id", use: adminUsers.delete)
        admin.post("users/:id/disable", use: adminUsers.disable)
        admin.post("users/:id/enable", use: adminUsers.enable)
        admin.post("users/:id/sign-out", use: adminUsers.signOut)
        admin.post("users/:id/password-reset", use: adminUsers.passwordReset)
        admin.get("users/:id/export", use: adminUsers.export)
        admin.get("users/:id/sessions", use: adminUsers.sessions)
        admin.get("users/:id/factors", use: adminUsers.factors)
        admin.post("users/:id/factors/reset", use: adminUsers.resetFactors)
        admin.delete("users/:id/passkeys/:passkey_id", use: adminUsers.removePasskey)
        admin.delete("sessions/:id", use: adminUsers.revokeSession)
        let adminServices = AdminServiceRoutes(services: services, keys: server.keys)
        admin.get("clients", use: adminServices.listClients)
        admin.post("clients", use: adminServices.createClient)
        admin.get("clients/:id", use: adminServices.showClient)
        admin.patch("clients/:id", use: adminServices.updateClient)
        admin.delete("clients/:id", use: adminServices.deleteClient)
        admin.post("registration-tokens", use: adminServices.issueRegistrationToken)
        admin.get("keys", use: adminServices.listKeys)
        admin.post("keys/rotate", use: adminServices.rotateKey)
        admin.post("keys/:kid/revoke", use: adminServices.revokeKey)
        admin.get("audit", use: adminServices.listAudit)

        // The admin console: HTML pages, also when they fail; signed in by a one-time link from the CLI.
        let consoleRoutes = ConsoleRoutes(services: services, keys: server.keys, templates: server.consoleTemplates)
        let consolePublic = router.group("/admin/console")
            .add(middleware: ErrorMiddleware(renderer: ConsoleErrorRenderer(templates: server.consoleTemplates)))
        consolePublic.get("enter", use: consoleRoutes.enterPage)
        consolePublic.post("enter", use: consoleRoutes.enter)
        let console =
            consolePublic
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    ConsoleAuthenticator(access: ConsoleAccess(persistence: services.persistence, clock: services.clock))
                ])
            )
            .group(context: AdminContext.self)
            .add(middleware: AdminRateLimit(services: services))
        console.get(use: consoleRoutes.overview)
        console.get("users", use: consoleRoutes.usersPage)
        console.get("users/:id", use: consoleRoutes.userPage)
        console.post("users/:id/sessions/:sid/revoke", use: consoleRoutes.revokeSession)
        console.post("users/:id/passkeys/:pid/remove", use: consoleRoutes.removePasskey)
        console.post("users/:id/:action", use: consoleRoutes.userAction)
        console.get("clients", use: consoleRoutes.clientsPage)
        console.get("keys", use: consoleRoutes.keysPage)
        console.post("keys/rotate", use: consoleRoutes.rotateKey)
        console.get("audit", use: consoleRoutes.auditPage)
        console.post("sign-out", use: consoleRoutes.signOut)

        // OAuth 2.0 endpoints: RFC 6749 error bodies.
        let oauth = router.group("/oauth").add(middleware: ErrorMiddleware(renderer: OAuthErrorRenderer()))
        let oauthRoutes = OAuthRoutes(services: services)
        router.group("/oauth").add(middleware: ErrorMiddleware(renderer: OAuthErrorRenderer())).add(middleware: RateLimitHeaders())
            .add(middleware: proofs).post("token", use: oauthRoutes.token)
        oauth.post("revoke", use: oauthRoutes.revoke)
        oauth.post("par", use: oauthRoutes.pushAuthorizationRequest)
        // Each device authorization is a row: counted per address block like a code sent.
        router.group("/oauth").add(middleware: ErrorMiddleware(renderer: OAuthErrorRenderer())).add(middleware: RateLimitHeaders())
            .post("device_authorization", use: oauthRoutes.deviceAuthorization)
        let registration = RegistrationRoutes(services: services)
        oauth.post("register", use: registration.register)
        oauth.get("register/:client_id", use: registration.read)
        oauth.put("register/:client_id", use: registration.update)
        oauth.delete("register/:client_id", use: registration.delete)
        oauth.post("introspect", use: oauthRoutes.introspect)

        // OIDC userinfo: a user's bearer token (in the header, or in a form POST's body), any of its
        // scopes' claims.
        let userInfoGroup = router.group("/userinfo")
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    BearerTokenAuthenticator(bearer: BearerAuthenticator(services: services)),
                    FormBodyTokenAuthenticator(bearer: BearerAuthenticator(services: services)),
                ])
            )
            .group(context: AuthenticatedContext.self)
        userInfoGroup.get(use: userInfo.userInfo)
        userInfoGroup.post(use: userInfo.userInfo)

        // Hosted pages behind the links in mail: HTML, also when they fail.
        let pages = router.group().add(middleware: ErrorMiddleware(renderer: PageErrorRenderer(catalog: server.templates)))
        let pageRoutes = PageRoutes(services: services, catalog: server.templates)
        pages.get("verify", use: pageRoutes.verifyPage)
        pages.post("verify", use: pageRoutes.verify)
        pages.get("reset", use: pageRoutes.resetForm)
        pages.post("reset", use: pageRoutes.reset)
        pages.get("magic-link", use: pageRoutes.magicLinkPage)
        pages.post("magic-link", use: pageRoutes.magicLink)
        // The browser's social sign-in: a failure before the flow is proved this browser's is a page,
        // never a redirect (nothing proves whose redirect it would be).
        let limitedPages = router.group().add(middleware: ErrorMiddleware(renderer: PageErrorRenderer(catalog: server.templates)))
            .add(middleware: RateLimitHeaders())
        limitedPages.get("v1/social/:provider/start", use: social.start)
        limitedPages.post("v1/social/:provider/callback", use: social.formPostCallback)
        // Pages that know the signed-in browser: its `gh_session` cookie, when it names a live session,
        // is the context's identity. No cookie, or a dead one, is no error: the page asks to sign in.
        func browserGroup() -> RouterGroup<AppRequestContext> {
            router.group()
                .add(middleware: ErrorMiddleware(renderer: PageErrorRenderer(catalog: server.templates)))
                .add(
                    middleware: AuthenticationMiddleware(authenticators: [BrowserSessionAuthenticator(sessions: services.browserSessions)]))
        }
        let browserPages = browserGroup()
        browserGroup().add(middleware: RateLimitHeaders()).get("v1/social/:provider/callback", use: social.callback)
        // The hosted sign-in (OpenID Connect): errors before the client's redirect URI is proved are
        // pages; after, the flow answers the client itself.
        let hosted = AuthorizeRoutes(services: services, catalog: server.templates)
        browserPages.get("oauth/authorize", use: hosted.authorize)
        browserPages.post("oauth/authorize", use: hosted.authorize)
        browserPages.get("authorize/:flow", use: hosted.show)
        browserPages.post("authorize/:flow/:action", use: hosted.act)
        pages.get("authorize/:flow/social/:provider", use: hosted.social)
        let logout = LogoutRoutes(services: services, catalog: server.templates)
        browserPages.get("oauth/logout", use: logout.logout)
        browserPages.post("oauth/logout", use: logout.logout)
        browserPages.get("web-session", use: webSessions.open)
        // Passkey enrolment for a browser signed in on the hosted pages.
        let passkeyPages = PasskeyPageRoutes(services: services, catalog: server.templates)
        browserPages.get("passkeys/new", use: passkeyPages.show)
        browserPages.post("passkeys/new", use: passkeyPages.create)
        // The device grant's page (RFC 8628): the code typed here leads into the hosted sign-in above.
        let devicePage = DeviceRoutes(services: services, catalog: server.templates)
        browserPages.get("device", use: devicePage.show)
        browserGroup().add(middleware: RateLimitHeaders()).post("device", use: devicePage.enter)

        let discovery = DiscoveryRoutes(server: server)
        router.get("/.well-known/openid-configuration", use: discovery.openIDConfiguration)
        router.get("/.well-known/jwks.json", use: discovery.jwks)
        // The native apps that share this server's passkeys.
        let apps = AppAssociationRoutes(settings: services.settings.passkeys)
        router.get("/.well-known/apple-app-site-association", use: apps.appleAppSiteAssociation)
        router.get("/.well-known/assetlinks.json", use: apps.assetLinks)

        let operations = OperationsRoutes(server: server)
        router.get("/health/live", use: operations.live)
        router.get("/health/ready", use: operations.ready)
        router.get("/metrics", use: operations.metrics)
        router.get("/openapi.yaml", use: operations.openAPI)

        // Last: it reads the table above.
        MethodNotAllowed.register(on: router)
    }
}

extension Request {
    /// `client_id` from the body, else the `Gatehouse-Client` header.
    func clientID(body: String?) -> String? {
        if let body, !body.isEmpty { return body }
        return headers[HTTPField.Name("Gatehouse-Client")!]
    }
}
