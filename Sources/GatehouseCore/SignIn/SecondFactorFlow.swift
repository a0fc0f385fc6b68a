import Foundation
import GatehouseAPI

/// Completes a sign-in that ``SessionStarter`` kept waiting for a second factor: the factor is checked
/// (a bounded number of times), the waiting flow is used up exactly once, and the session it was
/// going to start starts, through the same gate, now at the multi-factor level.
public struct SecondFactorFlow: Sendable {
    let services: CoreServices

    /// Wrong answers a waiting sign-in takes before it is gone: the first factor must be passed again.
    public static let maxAttempts = 5

    /// A wrong answer, thrown inside the completing transaction so that nothing of it stays.
    private struct WrongAnswer: Error {}

    public init(services: CoreServices) { self.services = services }

    /// What completing the factor started, for whom, and through which client.
    public struct Completed: Sendable {
        public var signedIn: SignedIn
        /// What the waiting sign-in was going to start (the hosted flow to go on with, the nonce).
        public var target: SessionTarget
        /// A factor enrolled in this sign-in was the user's first: its recovery codes, shown once.
        public var recoveryCodes: [String]?
    }

    /// A sign-in that requires a factor the user does not have: a new authenticator app for them, which
    /// the first code from it (``complete(flowID:factor:response:meta:)``) confirms and completes the
    /// sign-in with. Asked again, it shows the same app until one is confirmed.
    public func enrol(flowID: UUID) async throws -> TOTPEnrolment {
        let (flow, pending) = try await waiting(flowID)
        guard pending.enrol == true else {
            throw GatehouseError.validation(field: "flow_id", code: .invalidValue, message: "This sign-in asks for a factor the user has.")
        }
        guard let user = try await services.persistence.read({ try await $0.users.find(id: pending.authentication.userID) }),
            user.state == .active, flow.userID == user.id
        else { throw GatehouseError.flowExpired }
        return try await FactorsFlow.enrolTOTP(for: user, services: services, reuse: true)
    }

    /// The waiting sign-in behind `flowID`. The flow's id is the secret here: only the first factor's
    /// answer carried it.
    func waiting(_ flowID: UUID) async throws -> (FlowRecord, PendingSignIn) {
        let flow = try await FlowRunner(services: services).find(flowID, kind: .secondFactor)
        guard let data = flow.data, let pending = try? JSONDecoder().decode(PendingSignIn.self, from: Data(data.utf8)) else {
            throw GatehouseError.flowExpired
        }
        return (flow, pending)
    }

    public func complete(flowID: UUID, factor factorID: String, response: String, meta: RequestMeta) async throws -> Completed {
        let now = services.clock.now()
        let runner = FlowRunner(services: services)
        let (flow, pending) = try await waiting(flowID)
        guard pending.factors.contains(factorID), let factor = services.factors[factorID] else {
            throw GatehouseError.validation(field: "factor", code: .invalidValue, message: "Use one of the factors the flow names.")
        }
        // In a sign-in that leads the user to enrol, the app's first code confirms the new app; a code
        // by mail or text offered beside it is checked like any factor.
        let enrolling = pending.enrol == true && factor is TOTPFactor
        let client = try await services.clients.resolve(flow.clientID)
        let userID = pending.authentication.userID
        // Counted before the answer is checked, per waiting sign-in and per account (a new sign-in
        // with the password must not buy new guesses), so concurrent guesses cannot pass either
        // limit; the last allowed failure of a sign-in ends it.
        let window = flow.expiresAt.timeIntervalSince(now) + 60
        let key = "second-factor:" + flowID.uuidString.lowercased()
        let accountKey = FactorAttempts.key(userID)
        // The account counts only answers its waiting sign-ins will check, so the two limits never
        // race each other: an answer past its sign-in's limit costs the account nothing.
        let counts = try await services.persistence.transaction { stores -> (AttemptCount, AttemptCount?) in
            let perFlow = try await stores.attempts.recordFailure(key: key, now: now, window: window)
            guard perFlow.count <= Self.maxAttempts else { return (perFlow, nil) }
            return (perFlow, try await stores.attempts.recordFailure(key: accountKey, now: now, window: FactorAttempts.window))
        }
        guard let account = counts.1 else {
            // Out of answers: nothing past the limit is ever checked. The flow is left to expire rather
            // than ended here, so the answers counted before this one are still checked.
            throw GatehouseError.flowExpired
        }
        if account.count > FactorAttempts.maxPerAccount {
            throw GatehouseError.rateLimited(retryAfter: RateLimiter.secondsLeft(account, window: FactorAttempts.window, now: now))
        }
        let authentication = pending.authentication.completed(with: factor)
        let starter = services.starter
        let services = services
        // The answer is checked in the transaction that uses the flow and starts the session: a
        // recovery code or a TOTP step is spent only if the session starts, and only once.
        let user: UserRecord
        let start: SessionStart
        let codes: [String]?
        do {
            (user, start, codes) = try await runner.complete(flowID, meta: meta) { _, stores -> (UserRecord, SessionStart, [String]?) in
                let right =
                    if enrolling, let totp = factor as? TOTPFactor {
                        try await totp.confirmEnrolment(response, userID: userID, stores: stores)
                    } else {
                        try await factor.verify(response, userID: userID, clientID: client.id, flowID: flowID, stores: stores)
                    }
                guard right else { throw WrongAnswer() }
                guard let user = try await stores.users.find(id: userID), user.state == .active else {
                    throw GatehouseError.accountDisabled
                }
                try await stores.users.recordLogin(id: userID, at: now)
                // A right answer gives the account its counted attempts back.
                try await stores.attempts.reset(key: accountKey)
                var codes: [String]?
                if enrolling {
                    codes = try await FactorsFlow.confirmed(
                        userID: userID, clientID: client.id, services: services, meta: meta, stores: stores)
                } else if factor is RecoveryCodeFactor {
                    try await Self.recoveryCodeUsed(user, clientID: client.id, services: services, meta: meta, stores: stores)
                }
                let start = try await starter.start(authentication, client: client, target: pending.target, meta: meta, stores: stores)
                return (user, start, codes)
            }
        } catch is WrongAnswer {
            // Nothing of the transaction stands, the flow included: it waits for the next answer.
            await services.audit(
                AuditEvent(
                    at: now, type: AuditEvent.signInFailed, userID: userID, clientID: client.id, method: factor.id, reason: "invalid_code",
                    meta: meta))
            throw GatehouseError.invalidCode(remaining: max(Self.maxAttempts - counts.0.count, 0))
        }
        var shown = user
        shown.lastLoginAt = now
        return Completed(
            signedIn: SignedIn(started: try start.get(), user: shown, client: client, isNew: authentication.isNew), target: pending.target,
            recoveryCodes: codes)
    }

    /// A recovery code stood in for the app: recorded (audit, webhook) and the user told by mail, with
    /// how many codes are left, so a stolen set is noticed.
    private static func recoveryCodeUsed(
        _ user: UserRecord, clientID: String, services: CoreServices, meta: RequestMeta, stores: any Stores
    ) async throws {
        try await services.recordEvent(
            HookEvent(point: .recoveryCodeUse, clientID: clientID, method: "recovery_code", userID: user.id, meta: meta), stores: stores)
        guard let email = user.email else { return }
        let left = try await stores.credentials.count(userID: user.id, type: .recoveryCode)
        try await VerificationMessages(services: services).enqueue(
            kind: "recovery_code_used", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
            variables: ["codes_left": String(left)], stores: stores)
    }
}

extension SecondFactorFlow {
    /// Sends a code for an address factor the waiting sign-in offers (`email_otp`, `sms_otp`) to the
    /// user's proved address. Counted like every code sent (per address block, text messages also per
    /// country and in total) and spaced by the send cool-down per user and channel; a new code kills the
    /// one before.
    public func sendCode(flowID: UUID, factor factorID: String, meta: RequestMeta) async throws -> OTPSentResponse {
        let (flow, pending) = try await waiting(flowID)
        guard pending.factors.contains(factorID), let factor = services.factors[factorID] as? AddressCodeFactor else {
            throw GatehouseError.validation(field: "factor", code: .invalidValue, message: "Name a code factor the flow offers.")
        }
        let client = try await services.clients.resolve(flow.clientID)
        let userID = pending.authentication.userID
        guard let user = try await services.persistence.read({ try await $0.users.find(id: userID) }), user.state == .active,
            let address = factor.address(of: user)
        else { throw GatehouseError.flowExpired }
        let identifier: Identifier = factor.channel == .email ? .email(address) : .phone(address)
        try await OTPFlow.countSend(identifier, services: services, meta: meta)
        let settings = services.settings
        try await SendCooldown(services: services).claim("mfa:\(factorID):\(userID.uuidString)", interval: settings.sendCooldown)
        let services = services
        try await services.persistence.transaction { stores in
            let issued = try await services.codes.issue(
                purpose: .secondFactor, identifier: address, client: client, userID: userID, linkTTL: nil, data: nil, stores: stores)
            try await OTPFlow.enqueueCode(
                issued.code, to: identifier, client: client, locale: user.profile.locale ?? meta.acceptLanguage, services: services,
                stores: stores)
            try await services.recordCodeSent(
                purpose: "second_factor", identifier: address, channel: identifier.channel, userID: userID, clientID: client.id,
                meta: meta, stores: stores)
        }
        return OTPSentResponse(sentTo: identifier.masked, expiresIn: Int(settings.codeTTL), resendAfter: Int(settings.sendCooldown))
    }
}
