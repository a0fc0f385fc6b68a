import Foundation
import GatehouseAPI

/// Password recovery: a code and a link by mail, a short-lived recovery session, or a reset on the
/// hosted page.
public struct RecoveryFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes
    let issuer: SessionIssuer

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = OneTimeCodes(services: services)
        self.issuer = services.issuer
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
        let record: OneTimeCodeRecord
        let client: ClientRecord
        if let token, !token.isEmpty {
            record = try await codes.redeem(token: token, purpose: .recovery)
            client = try await clients.resolve(record.clientID)
        } else if let raw, let code {
            client = try await clients.resolve(clientID)
            try await services.rateLimits.consume(
                .codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
            let email = EmailAddress.normalize(raw)
            record = try await services.auditingCodeCheck(method: "email_recovery", identifier: email, clientID: client.id, meta: meta) {
                try await codes.redeem(code: code, purpose: .recovery, identifier: email, clientID: client.id)
            }
        } else {
            throw GatehouseError.validation(field: nil, code: .required, message: "Send email and code, or token.")
        }
        guard let userID = record.userID else { throw OneTimeCodes.expired }
        let scopes = SessionIssuer.grant(requested: nil, client: client)
        let now = services.clock.now()
        let password = services.password
        let starter = services.starter
        let (user, start) = try await services.persistence.transaction { stores -> (UserRecord, SessionStart) in
            guard var user = try await stores.users.find(id: userID), user.state == .active else { throw OneTimeCodes.expired }
            // Receiving the code proves the address. If it was never proved before, the password was set
            // by whoever created the account, who may not own the address: it goes, as do their sessions.
            if !user.emailVerified {
                user.emailVerified = true
                user.updatedAt = now
                user.hasPassword = false
                try await stores.users.update(user)
                try await password.firstProof(of: user.id, at: now, stores: stores)
            }
            try await services.recordEvent(
                HookEvent(point: .recovery, clientID: client.id, method: "email_code", identifier: user.email, userID: user.id, meta: meta),
                stores: stores)
            return (
                user,
                try await starter.start(
                    Authentication(userID: user.id, amr: [AuthenticationMethod.recovery]), client: client,
                    target: .app(.init(scopes: scopes)),
                    meta: meta, stores: stores)
            )
        }
        let started = try start.get().app()
        await services.hooks.after(
            HookEvent(point: .recovery, clientID: client.id, method: "email_code", identifier: user.email, userID: user.id, meta: meta))
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: user, isNew: false)
    }

    /// The hosted reset page: checks the link token, sets the password, ends every session. Everything
    /// that can fail is checked before the link is used up, so a weak password does not burn it.
    public func reset(token: String, password: String, meta: RequestMeta) async throws {
        let now = services.clock.now()
        guard token.utf8.count <= 256 else { throw OneTimeCodes.expired }
        let tokenHash = Secrets.sha256Hex(token)
        let pending = try await services.persistence.read { stores -> UserRecord? in
            guard let record = try await stores.codes.find(tokenHash: tokenHash), record.purpose == .recovery,
                record.consumedAt == nil, record.expiresAt > now, let userID = record.userID
            else { return nil }
            return try await stores.users.find(id: userID)
        }
        guard let user = pending, user.state == .active else { throw OneTimeCodes.expired }
        var result = ValidationResult()
        services.settings.passwordPolicy.validate(password, email: user.email, into: &result)
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
            _ = try await stores.endAllSessions(of: userID, at: now, reason: .passwordChanged)
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
