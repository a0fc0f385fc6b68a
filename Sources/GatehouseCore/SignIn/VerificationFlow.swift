import Foundation
import GatehouseAPI

/// Email verification: resend, verify by code or link, and the deep link back into the app.
public struct VerificationFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes
    let issuer: SessionIssuer

    /// The binding of the verification-mail cool-down, shared with the sign-up that sends the first mail.

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = OneTimeCodes(services: services)
        self.issuer = services.issuer
    }

    /// Where a verified link leads.
    public enum LinkOutcome: Sendable {
        /// Back into the app: `redirectTo` with `?code=` appended.
        case redirect(URL)
        /// No app to return to: show a confirmation page.
        case confirmed(email: String)
        /// The client still needs the user's terms or fields: the hosted pages of this flow first,
        /// then the app with its code.
        case continueFlow(UUID)
    }

    /// Same answer whether or not the address is known; the cool-down applies either way.
    @discardableResult
    public func resend(email raw: String, clientID: String?, meta: RequestMeta) async throws -> MailSentResponse {
        let client = try await clients.resolve(clientID)
        var result = ValidationResult()
        let email = EmailAddress.validate(raw, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        try await services.rateLimits.consume(.codeSend, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        try await SendCooldown(services: services).claim(
            VerificationMessages.cooldownKey(clientID: client.id, email: email), interval: services.settings.sendCooldown)
        try await services.persistence.transaction { stores in
            guard let user = try await stores.users.find(email: email), !user.emailVerified, user.state == .active else { return }
            // The new link must lead back into the app like the one it replaces.
            let previous = try await stores.codes.findOpen(purpose: .verifyEmail, identifier: email, clientID: client.id)
            let link = previous?.data.flatMap { try? JSONDecoder().decode(VerificationMessages.LinkData.self, from: Data($0.utf8)) }
            try await VerificationMessages(services: services).issue(
                user: user, client: client, redirectTo: link?.redirectTo, pkce: link?.pkce, meta: meta, stores: stores)
        }
        return MailSentResponse(resendAfter: Int(services.settings.sendCooldown))
    }

    /// `{email, code}`: verifies and signs in.
    public func verify(email raw: String, code: String, clientID: String?, meta: RequestMeta) async throws -> TokenResponse {
        let client = try await clients.resolve(clientID)
        let email = EmailAddress.normalize(raw)
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        // The hook learns whose account it is when there is one; the lookup is skipped without hooks.
        let known = services.hooks.hasBeforeHooks ? try await services.persistence.read { try await $0.users.find(email: email) } : nil
        try await services.hooks.before(
            HookEvent(point: .verification, clientID: client.id, method: "email_code", identifier: email, userID: known?.id, meta: meta))
        let record = try await services.auditingCodeCheck(method: "email_verification", identifier: email, clientID: client.id, meta: meta)
        {
            try await codes.redeem(code: code, purpose: .verifyEmail, identifier: email, clientID: client.id)
        }
        return try await signIn(record, client: client, meta: meta)
    }

    /// `{token}` from the mail's link, posted by an app: verifies and signs in.
    public func verify(token: String, meta: RequestMeta) async throws -> TokenResponse {
        let record = try await codes.redeem(token: token, purpose: .verifyEmail)
        let client = try await clients.resolve(record.clientID)
        return try await signIn(record, client: client, meta: meta)
    }

    /// `GET /verify?token=`: verifies, then returns to the app with an authorization code when the
    /// sign-up named a redirect, or confirms on a page.
    /// Whether the mail's link still works, without using it: the page a link opens asks before it
    /// verifies, so a mail scanner that fetches every link uses nothing.
    public func linkIsOpen(token: String) async throws -> Bool {
        try await codes.isOpen(token: token, purpose: .verifyEmail)
    }

    /// `binding`: the browser's flow cookie, for the pages the link may continue through (the client's
    /// terms, its required fields) before the app gets its code.
    public func followLink(token: String, binding: String) async throws -> LinkOutcome {
        let record = try await codes.redeem(token: token, purpose: .verifyEmail)
        let client = try await clients.resolve(record.clientID)
        let (user, firstSignIn) = try await markVerified(record, method: "email_link")
        let link = record.data.flatMap { try? JSONDecoder().decode(VerificationMessages.LinkData.self, from: Data($0.utf8)) }
        guard let redirect = link?.redirectTo, client.redirectURIs.contains(redirect) else {
            return .confirmed(email: user.email ?? "")
        }
        if let flow = try await AuthorizeFlow(services: services).continueLink(
            user: user, client: client, redirectURI: redirect, pkce: link?.pkce, amr: [AuthenticationMethod.oneTimeCode],
            isNew: firstSignIn,
            binding: binding)
        {
            return .continueFlow(flow)
        }
        let starter = services.starter
        let authentication = Authentication(userID: user.id, amr: [AuthenticationMethod.oneTimeCode], isNew: firstSignIn)
        let start = try await services.persistence.transaction { stores in
            try await starter.start(
                authentication, client: client, target: .authorizationCode(.init(redirectURI: redirect, pkce: link?.pkce)),
                meta: RequestMeta(),
                stores: stores)
        }
        return .redirect(try AuthorizationCodes.append(code: try start.get().code(), to: redirect))
    }

    private func signIn(_ record: OneTimeCodeRecord, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        let (user, firstSignIn) = try await markVerified(record, method: "email_code", meta: meta)
        await services.hooks.after(
            HookEvent(point: .verification, clientID: client.id, method: "email_code", identifier: user.email, userID: user.id, meta: meta))
        let scopes = SessionIssuer.grant(requested: nil, client: client)
        let starter = services.starter
        let authentication = Authentication(userID: user.id, amr: [AuthenticationMethod.oneTimeCode], isNew: firstSignIn)
        let start = try await services.persistence.transaction { stores in
            try await starter.start(authentication, client: client, target: .app(.init(scopes: scopes)), meta: meta, stores: stores)
        }
        let started = try start.get().app()
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: user, isNew: firstSignIn)
    }

    /// The account, and whether this is its first sign-in: an account that had to verify its address
    /// before signing in meets its app here for the first time (`is_new`).
    private func markVerified(
        _ record: OneTimeCodeRecord, method: String, meta: RequestMeta = RequestMeta()
    ) async throws
        -> (UserRecord, firstSignIn: Bool)
    {
        let now = services.clock.now()
        guard let userID = record.userID else { throw OneTimeCodes.expired }
        return try await services.persistence.transaction { stores in
            guard var user = try await stores.users.find(id: userID), user.email == record.identifier else {
                throw OneTimeCodes.expired
            }
            guard user.state == .active else { throw GatehouseError.accountDisabled }
            let firstSignIn = !user.emailVerified && user.lastLoginAt == nil
            if !user.emailVerified {
                user.emailVerified = true
                user.updatedAt = now
                try await stores.users.update(user)
                try await services.recordEvent(
                    HookEvent(
                        point: .verification, clientID: record.clientID, method: method, identifier: user.email, userID: user.id,
                        meta: meta),
                    stores: stores)
            }
            return (user, firstSignIn)
        }
    }
}
