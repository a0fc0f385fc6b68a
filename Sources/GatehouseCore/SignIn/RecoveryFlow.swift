import Foundation
import GatehouseAPI

/// Password recovery: a code and a link by mail, a short-lived recovery session, or a reset on the
/// hosted page.
public struct RecoveryFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = services.codes
    }

    /// Always the same answer. A known address gets a code and a reset link; an unknown one gets a
    /// neutral notice only when the client turned that on (it costs a mail per guess).
    @discardableResult
    public func request(email raw: String, clientID: String?, meta: RequestMeta) async throws -> MailSentResponse {
        let client = try await clients.resolve(clientID)
        var result = ValidationResult()
        let email = EmailAddress.validate(raw, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        try await services.rateLimits.consume(.codeSend, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        try await services.botChallenge.require(.codeSend, client: client, meta: meta)
        try await services.hooks.before(HookEvent(point: .recovery, clientID: client.id, method: "email", identifier: email, meta: meta))
        try await SendCooldown(services: services).claim("recovery:\(client.id):\(email)", interval: services.settings.sendCooldown)
        let messages = VerificationMessages(services: services)
        try await services.persistence.transaction { stores in
            guard let user = try await stores.users.find(email: email), user.state == .active else {
                if client.settings.recoveryUnknownNotice.isOn {
                    try await messages.enqueue(
                        kind: "recovery_unknown", to: email, locale: meta.acceptLanguage,
                        variables: ["client_name": client.name], stores: stores)
                }
                return
            }
            let issued = try await codes.issue(
                purpose: .recovery, identifier: email, client: client, userID: user.id,
                linkTTL: services.settings.recoveryLinkTTL, data: nil, stores: stores)
            try await messages.enqueue(
                kind: "recovery", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
                variables: [
                    "code": issued.code, "link": services.settings.publicURL + "/reset?token=" + (issued.token ?? ""),
                    "client_name": client.name, "minutes": messages.minutes(services.settings.codeTTL),
                ],
                stores: stores)
            try await services.recordCodeSent(
                purpose: "recovery", identifier: email, channel: .email, userID: user.id, clientID: client.id, meta: meta, stores: stores)
        }
        return MailSentResponse(resendAfter: Int(services.settings.sendCooldown))
    }

    /// `{email, code}` or `{token}`: a session whose `amr` holds `recovery`, so the password can be set
    /// without the old one for a few minutes.
    public func verify(
        email raw: String?, code: String?, token: String?, clientID: String?, meta: RequestMeta
    ) async throws
        -> TokenResponse
    {
        let strategy = MailedCodeSignIn(services: services, purpose: .recovery)
        let runner = FlowRunner(services: services)
        if let token, !token.isEmpty {
            guard let record = try await codes.peek(token: token, purpose: .recovery) else { throw OneTimeCodes.expired }
            return try await runner.signIn(
                strategy, submission: .token(token, record: record), request: .init(clientID: record.clientID, meta: meta))
        } else if let raw, let code {
            return try await runner.signIn(
                strategy, submission: .code(email: raw, code: code), request: .init(clientID: clientID, meta: meta))
        }
        throw GatehouseError.validation(field: nil, code: .required, message: "Send email and code, or token.")
    }

    /// The hosted reset page: checks the link token, sets the password, ends every session. Everything
    /// that can fail is checked before the link is used up, so a weak password does not burn it.
    public func reset(token: String, password: String, meta: RequestMeta) async throws {
        let now = services.clock.now()
        guard token.utf8.count <= 256 else { throw OneTimeCodes.expired }
        let tokenHash = Secrets.sha256Hex(token)
        let pending = try await services.persistence.read { stores -> (UserRecord, String?)? in
            guard let record = try await stores.codes.find(tokenHash: tokenHash), record.purpose == .recovery,
                record.consumedAt == nil, record.expiresAt > now, let userID = record.userID,
                let user = try await stores.users.find(id: userID)
            else { return nil }
            return (user, record.clientID)
        }
        guard let (user, clientID) = pending, user.state == .active else { throw OneTimeCodes.expired }
        var result = ValidationResult()
        let client = try? await services.clients.resolve(clientID)
        await services.passwordScreen.check(password, email: user.email, appName: client?.name, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        let strategy = services.password
        let throttle = services.throttle
        let hash = try await strategy.hash(password)
        let record = try await codes.redeem(token: token, purpose: .recovery)
        guard let userID = record.userID, userID == user.id else { throw OneTimeCodes.expired }
        let changed = HookEvent(
            point: .passwordChange, clientID: record.clientID, method: "email_link", identifier: user.email, userID: userID, meta: meta)
        try await services.persistence.transaction { stores in
            try await services.recordEvent(changed, stores: stores)
            if !user.emailVerified {
                var verified = user
                verified.emailVerified = true
                verified.updatedAt = now
                try await stores.users.update(verified)
            }
            try await strategy.setPassword(hash: hash, for: user, now: now, stores: stores)
            _ = try await stores.endAllSessions(of: userID, at: now, reason: .passwordChanged, notices: services.notices)
            try await throttle.clear(email: user.email ?? "", ip: meta.ipAddress, stores: stores)
            if let email = user.email {
                try await VerificationMessages(services: services).enqueue(
                    kind: "password_changed", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
                    variables: [:], stores: stores)
            }
        }
        await services.hooks.after(
            HookEvent(point: .recovery, clientID: record.clientID, method: "email_link", identifier: user.email, userID: userID, meta: meta)
        )
        await services.hooks.after(changed)
    }
}
