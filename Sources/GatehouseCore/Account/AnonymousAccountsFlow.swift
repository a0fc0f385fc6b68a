import Foundation
import GatehouseAPI

/// Anonymous accounts: started with no identifier (``AnonymousSignIn``), upgraded in place by what
/// gives them a way back in — a password with an address, an address proved by a code, a provider
/// (``IdentitiesFlow``) or a passkey (``PasskeysFlow``). The user id, profile and data stay; the
/// account's sessions go on, their `amr` now the upgrade's, so their next tokens drop `is_anonymous`.
public struct AnonymousAccountsFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// `POST /v1/anonymous`: a new anonymous account and its first session.
    public func signIn(clientID: String?, meta: RequestMeta) async throws -> TokenResponse {
        try await FlowRunner(services: services).signIn(
            AnonymousSignIn(services: services), submission: (), request: .init(clientID: clientID, meta: meta))
    }

    /// Links an address and a password. The address is not proved yet: a verification mail goes to it
    /// as after a sign-up.
    public func upgrade(_ principal: Principal, email raw: String, password: String, meta: RequestMeta) async throws -> User {
        try Self.requireAnonymous(principal.user)
        let client = try await services.clients.resolve(principal.session.clientID)
        var result = ValidationResult()
        let email = EmailAddress.validate(raw, into: &result)
        await services.passwordScreen.check(password, email: email, appName: client.name, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        let hash = try await services.password.hash(password)
        let now = services.clock.now()
        let user = try await services.persistence.transaction { stores in
            var user = try await Self.claim(email, for: principal.user, now: now, stores: stores)
            user.hasPassword = true
            try await stores.credentials.insert(try PasswordStrategy.credential(for: user, hash: hash, now: now))
            try await Self.makePermanent(&user, amr: services.password.amr, now: now, stores: stores)
            try await VerificationMessages(services: services).issue(
                user: user, client: client, redirectTo: nil, pkce: nil, meta: meta, stores: stores)
            try await self.recordUpgrade(user, method: CredentialType.password.rawValue, client: client, meta: meta, stores: stores)
            return user
        }
        return user.wire
    }

    /// Sends a code to prove an address the anonymous account will take (`email_otp` on the client).
    public func sendCode(_ principal: Principal, email raw: String, meta: RequestMeta) async throws -> OTPSentResponse {
        try Self.requireAnonymous(principal.user)
        let client = try await services.clients.resolve(principal.session.clientID)
        var result = ValidationResult()
        let email = EmailAddress.validate(raw, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        let identifier = Identifier.email(email)
        try OneTimeCodeSignIn.requireEnabled(identifier, client: client, smsAvailable: services.settings.smsAvailable)
        try await OTPFlow.countSend(identifier, services: services, meta: meta)
        try await SendCooldown(services: services).claim("upgrade:\(client.id):\(email)", interval: services.settings.sendCooldown)
        let userID = principal.user.id
        try await services.persistence.transaction { stores in
            let issued = try await services.codes.issue(
                purpose: .upgrade, identifier: email, client: client, userID: userID, linkTTL: nil, data: nil,
                stores: stores)
            try await OTPFlow.enqueueCode(
                issued.code, to: identifier, client: client, locale: meta.acceptLanguage, services: services, stores: stores)
            try await services.recordCodeSent(
                purpose: "upgrade", identifier: email, channel: .email, userID: userID, clientID: client.id, meta: meta, stores: stores)
        }
        return OTPSentResponse(
            sentTo: identifier.masked, expiresIn: Int(services.settings.codeTTL), resendAfter: Int(services.settings.sendCooldown))
    }

    /// The code from ``sendCode(_:email:meta:)``: the address is the account's, proved.
    public func verifyCode(_ principal: Principal, email raw: String, code: String, meta: RequestMeta) async throws -> User {
        try Self.requireAnonymous(principal.user)
        let client = try await services.clients.resolve(principal.session.clientID)
        let email = EmailAddress.normalize(raw)
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        let codes = services.codes
        let record = try await services.auditingCodeCheck(method: "email_upgrade", identifier: email, clientID: client.id, meta: meta) {
            try await codes.redeem(code: code, purpose: .upgrade, identifier: email, clientID: client.id)
        }
        // Another anonymous account's code for the same address is not this one's to use.
        guard record.userID == principal.user.id else { throw OneTimeCodes.expired }
        let now = services.clock.now()
        let user = try await services.persistence.transaction { stores in
            var user = try await Self.claim(email, for: principal.user, now: now, stores: stores)
            user.emailVerified = true
            try await stores.users.update(user)
            try await Self.makePermanent(&user, amr: [AuthenticationMethod.oneTimeCode], now: now, stores: stores)
            try await self.recordUpgrade(user, method: "email_code", client: client, meta: meta, stores: stores)
            return user
        }
        return user.wire
    }

    /// Ends `user`'s anonymity in the caller's transaction: the flag, and the `amr` of its sessions.
    static func makePermanent(_ user: inout UserRecord, amr: [String], now: Date, stores: any Stores) async throws {
        guard user.isAnonymous else { return }
        user.isAnonymous = false
        user.updatedAt = now
        try await stores.users.update(user)
        try await stores.sessions.replaceAnonymousAMR(userID: user.id, with: amr)
    }

    /// Gives the account `email`, unless another account has it: 409 `already_registered`, which the
    /// app resolves by signing in to that account instead (the anonymous account's data stays where
    /// it is).
    private static func claim(_ email: String, for anonymous: UserRecord, now: Date, stores: any Stores) async throws -> UserRecord {
        guard var user = try await stores.users.find(id: anonymous.id), user.isAnonymous else { throw GatehouseError.notAnonymous }
        if try await stores.users.find(email: email) != nil { throw GatehouseError.upgradeAddressTaken }
        user.email = email
        user.updatedAt = now
        do {
            try await stores.users.update(user)
        } catch StoreError.conflict {
            throw GatehouseError.upgradeAddressTaken
        }
        return user
    }

    private func recordUpgrade(_ user: UserRecord, method: String, client: ClientRecord, meta: RequestMeta, stores: any Stores) async throws
    {
        try await stores.audit.append(
            AuditEvent(at: services.clock.now(), type: "user.upgraded", userID: user.id, clientID: client.id, method: method, meta: meta))
    }

    static func requireAnonymous(_ user: UserRecord) throws {
        guard user.isAnonymous else { throw GatehouseError.notAnonymous }
    }
}
