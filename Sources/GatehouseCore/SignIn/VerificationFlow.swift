import Foundation
import GatehouseAPI

/// Email verification: resend, verify by code or link, and the deep link back into the app.
public struct VerificationFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes

    /// The binding of the verification-mail cool-down, shared with the sign-up that sends the first mail.

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = services.codes
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
        try await services.botChallenge.require(.codeSend, client: client, meta: meta)
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
        try await FlowRunner(services: services).signIn(
            MailedCodeSignIn(services: services, purpose: .verifyEmail), submission: .code(email: raw, code: code),
            request: .init(clientID: clientID, meta: meta))
    }

    /// `{token}` from the mail's link, posted by an app: verifies and signs in.
    public func verify(token: String, meta: RequestMeta) async throws -> TokenResponse {
        guard let record = try await codes.peek(token: token, purpose: .verifyEmail) else { throw OneTimeCodes.expired }
        return try await FlowRunner(services: services).signIn(
            MailedCodeSignIn(services: services, purpose: .verifyEmail), submission: .token(token, record: record),
            request: .init(clientID: record.clientID, meta: meta))
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
        guard let peeked = try await codes.peek(token: token, purpose: .verifyEmail) else { throw OneTimeCodes.expired }
        let client = try await clients.resolve(peeked.clientID)
        let link = peeked.data.flatMap { try? JSONDecoder().decode(VerificationMessages.LinkData.self, from: Data($0.utf8)) }
        guard let redirect = link?.redirectTo, client.redirectURIs.contains(redirect) else {
            // No app to return to: the address is proved, and nobody signs in.
            return .confirmed(email: try await markVerified(token: token).user.email ?? "")
        }
        let user = try await peeked.userID.asyncMap { id in try await services.persistence.read { try await $0.users.find(id: id) } } ?? nil
        let authorize = AuthorizeFlow(services: services)
        if let user, try await authorize.linkNeedsPages(user: user, client: client) {
            // The client's terms or fields first: the code is issued when its pages are done.
            let proved = try await markVerified(token: token)
            if let flow = try await authorize.continueLink(
                user: proved.user, client: client, redirectURI: redirect, pkce: link?.pkce, amr: [AuthenticationMethod.oneTimeCode],
                isNew: proved.firstSignIn, binding: binding)
            {
                return .continueFlow(flow)
            }
        }
        return .redirect(
            try await LinkRedirect.after(
                {
                    try await FlowRunner(services: services).signIn(
                        MailedCodeSignIn(services: services, purpose: .verifyEmail), submission: .token(token, record: peeked),
                        request: .init(clientID: client.id, meta: RequestMeta()),
                        target: .authorizationCode(.init(redirectURI: redirect, pkce: link?.pkce)))
                }, redirect: redirect))
    }

    /// Uses the link and proves its address, without signing anyone in (a confirmation page, or the
    /// hosted pages that come before the app's code).
    private func markVerified(token: String) async throws -> (user: UserRecord, firstSignIn: Bool) {
        let record = try await codes.redeem(token: token, purpose: .verifyEmail)
        let now = services.clock.now()
        let (user, firstSignIn, event) = try await services.persistence.transaction { stores in
            let proved = try await MailedCodeSignIn.proveAddress(record, now: now, stores: stores)
            guard proved.newlyProved else { return (proved.user, proved.firstSignIn, HookEvent?.none) }
            let event = HookEvent(
                point: .verification, clientID: record.clientID, method: "email_link", identifier: proved.user.email,
                userID: proved.user.id, meta: RequestMeta())
            try await services.recordEvent(event, stores: stores)
            return (proved.user, proved.firstSignIn, event)
        }
        if let event { await services.hooks.after(event) }
        return (user, firstSignIn)
    }
}
