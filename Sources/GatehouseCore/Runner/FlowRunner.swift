import Foundation
import Logging
import GatehouseAPI

/// Runs what every flow shares: sign-in through any credential strategy with its hook points, and the
/// life of persisted flows (begin, advance, finish once).
public struct FlowRunner: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// What a sign-in asks for besides the credential.
    public struct SignInRequest: Sendable {
        public var clientID: String?
        public var scope: String?
        public var nonce: String?
        /// Data for the before-hook besides the credential (a custom authenticator's extra data).
        public var customData: String?
        public var meta: RequestMeta

        public init(clientID: String?, scope: String? = nil, nonce: String? = nil, customData: String? = nil, meta: RequestMeta) {
            self.clientID = clientID
            self.scope = scope
            self.nonce = nonce
            self.customData = customData
            self.meta = meta
        }
    }

    /// Signs a user in with `strategy` and answers with an app session's tokens.
    public func signIn<S: CredentialStrategy>(
        with strategy: S, submission: S.Submission, request: SignInRequest
    )
        async throws -> TokenResponse
    {
        let client = try await services.clients.resolve(request.clientID)
        let target = SessionTarget.app(.init(scopes: SessionIssuer.grant(requested: request.scope, client: client), nonce: request.nonce))
        let signedIn = try await signIn(with: strategy, submission: submission, request: request, target: target)
        let started = try signedIn.started.app()
        return try await services.issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: signedIn.client,
            user: signedIn.user, isNew: false, nonce: request.nonce)
    }

    /// Signs a user in with `strategy`: throttle, lookup by identifier, before-hook (with the user when
    /// known), verification (or the same work for an unknown one), failure counting on the credential
    /// and the throttle, the account's state, then `target` through ``SessionStarter`` and the
    /// after-hook. The same path for every credential type.
    public func signIn<S: CredentialStrategy>(
        with strategy: S, submission: S.Submission, request: SignInRequest, target: SessionTarget
    )
        async throws -> SignedIn
    {
        let client = try await services.clients.resolve(request.clientID)
        if let nonce = request.nonce, nonce.count > 256 {
            throw GatehouseError.validation(field: "nonce", code: .tooLong, message: "Use at most 256 characters.")
        }
        let identifier = try strategy.identifier(of: submission)
        // What hooks, the log and the audit log may see: never a value derived from a key or a secret.
        let shown = strategy.shownIdentifier(of: submission)
        let meta = request.meta
        let now = services.clock.now()
        let throttle = services.throttle
        // Counted before anything is looked up or checked: a refusal here rolls the count back.
        let attempt: LoginAttempt?
        do {
            attempt =
                strategy.usesSignInThrottle
                ? try await services.persistence.transaction { stores in
                    try await throttle.begin(email: identifier, ip: meta.ipAddress, stores: stores, now: now)
                } : nil
        } catch let error as GatehouseError where error.code == .rateLimited {
            await logFailure("sign-in throttled", strategy.type, client: client, account: shown, meta: meta, throttled: true)
            throw error
        }
        let found = try await services.persistence.read { stores -> (UserRecord, CredentialRecord)? in
            guard let credential = try await stores.credentials.find(type: strategy.type, identifier: identifier),
                let user = try await stores.users.find(id: credential.userID)
            else { return nil }
            return (user, credential)
        }
        // After the throttle, so a flood of sign-ins never reaches the operator's hook; a hook's refusal
        // is no failed guess, so its count is given back.
        let changes: HookChanges
        do {
            changes = try await services.hooks.before(
                HookEvent(
                    point: .login, clientID: client.id, method: strategy.type.rawValue, identifier: shown, userID: found?.0.id,
                    customData: request.customData, meta: meta))
        } catch {
            if let attempt { try? await services.persistence.transaction { try await throttle.abandoned(attempt, stores: $0) } }
            throw error
        }

        // Unknown identifier and wrong secret do the same work and give the same answer.
        guard let (user, credential) = found else {
            try await givingBackWhenBusy(attempt) { try await strategy.verifyUnknown(submission) }
            await logFailure("sign-in failed", strategy.type, client: client, account: shown, meta: meta)
            throw GatehouseError.invalidCredentials
        }
        let limit = strategy.failureLimit(for: credential, client: client)
        let removal = HookEvent(
            point: .authenticatorRemoval, clientID: client.id, method: strategy.type.rawValue, identifier: shown,
            userID: credential.userID, meta: meta)
        let reserved: Int? =
            if let limit { try await reserveAttempt(on: credential, limit: limit, now: now, removal: removal) } else { nil }
        let verification = try await givingBackWhenBusy(attempt) { try await strategy.verify(submission, against: credential) }
        guard case .verified(let upgradedConfig) = verification else {
            // The throttle counted this attempt already; the credential keeps its own count too.
            if let limit, let reserved {
                try await rejectLimited(credential, limit: limit, reserved: reserved, now: now, removal: removal)
            }
            _ = try await services.persistence.transaction { try await $0.credentials.recordFailure(id: credential.id, at: now) }
            await logFailure("sign-in failed", strategy.type, client: client, account: shown, meta: meta)
            throw GatehouseError.invalidCredentials
        }
        do {
            guard user.state == .active else { throw GatehouseError.accountDisabled }
            if client.settings.emailVerification == .required, !strategy.provesIdentifier, !user.emailVerified {
                throw GatehouseError.emailNotVerified
            }
        } catch {
            // The secret was right: a counted attempt is not a failure.
            if reserved != nil {
                _ = try? await services.persistence.transaction { try await $0.credentials.resetFailures(id: credential.id) }
            }
            throw error
        }

        let authentication = Authentication(userID: user.id, amr: strategy.amr(for: credential), credentialID: credential.id)
        let signedIn = HookEvent(
            point: .login, clientID: client.id, method: strategy.type.rawValue, identifier: shown, userID: user.id, meta: meta)
        let starter = services.starter
        let start = try await services.persistence.transaction { stores in
            if let upgradedConfig {
                var upgraded = credential
                upgraded.config = upgradedConfig
                upgraded.updatedAt = now
                try await stores.credentials.update(upgraded)
            }
            // A counted attempt always resets, and finds out here whether its credential survived the
            // attempts that ran beside it.
            if reserved != nil || credential.failureCount > 0 {
                guard try await stores.credentials.resetFailures(id: credential.id) else {
                    throw GatehouseError.deviceDeregistered()
                }
            }
            if let attempt { try await throttle.succeeded(attempt, stores: stores) }
            let start = try await starter.start(authentication, client: client, target: target, meta: meta, stores: stores)
            // A sign-in waiting for its second factor has not signed in yet.
            guard start.isStarted else { return start }
            try await stores.users.recordLogin(id: user.id, at: now)
            if let metadata = changes.appMetadata, var current = try await stores.users.find(id: user.id) {
                current.appMetadata = (current.appMetadata ?? [:]).merging(metadata) { $1 }
                try await stores.users.update(current)
            }
            try await services.recordEvent(signedIn, stores: stores)
            return start
        }
        let started = try start.get()
        await services.hooks.after(signedIn)
        var answer = user
        answer.lastLoginAt = now
        if let metadata = changes.appMetadata { answer.appMetadata = (user.appMetadata ?? [:]).merging(metadata) { $1 } }
        return SignedIn(started: started, user: answer, client: client, isNew: false)
    }

    /// Counts the attempt before it is checked: the count it gets is its place in line, so however many
    /// run at once, at most `limit` are ever checked against the credential.
    private func reserveAttempt(on credential: CredentialRecord, limit: Int, now: Date, removal: HookEvent) async throws -> Int {
        let count = try await services.persistence.transaction { try await $0.credentials.recordFailure(id: credential.id, at: now) }
        guard let count else { throw GatehouseError.deviceDeregistered() }
        // More attempts than allowed: a burst of guesses, or a count left behind by a crash or a lowered
        // limit. Either way the credential is spent; it is never checked again.
        if count > limit {
            try await remove(credential, now: now, removal: removal)
            throw GatehouseError.deviceDeregistered()
        }
        return count
    }

    /// A counted attempt failed: its failure stays counted; the last allowed one deletes the credential
    /// and ends every session started with it.
    private func rejectLimited(
        _ credential: CredentialRecord, limit: Int, reserved: Int, now: Date, removal: HookEvent
    ) async throws -> Never {
        let exhausted = reserved >= limit
        if exhausted { try await remove(credential, now: now, removal: removal) }
        await services.audit(
            AuditEvent(
                at: now, type: AuditEvent.signInFailed, userID: credential.userID, clientID: removal.clientID, method: removal.method,
                reason: exhausted ? "device_deregistered" : "authenticator_rejected",
                account: removal.identifier.map(AuditEvent.account(of:)), meta: removal.meta))
        let counts = FailureCounts(max: limit, previous: reserved)
        services.logger.info(
            "credential rejected",
            metadata: ["credential": "\(credential.id)", "failures": "\(reserved)/\(limit)", "removed": "\(exhausted)"])
        throw exhausted ? GatehouseError.deviceDeregistered(counts) : GatehouseError.authenticatorRejected(counts)
    }

    /// Failed and throttled sign-ins at `info`, visible at the default level: the method, the client,
    /// the address block and a short hash of the identifier (enough to see one account under attack,
    /// without writing the address into the log).
    private func logFailure(
        _ message: Logger.Message, _ type: CredentialType, client: ClientRecord, account shown: String?, meta: RequestMeta,
        throttled: Bool = false
    ) async {
        let account = shown.map(AuditEvent.account(of:))
        let address = meta.ipAddress.map(LoginThrottle.addressBlock)
        services.logger.info(
            message,
            metadata: ["method": "\(type)", "client": "\(client.id)", "account": "\(account ?? "-")", "address": "\(address ?? "-")"])
        await services.audit(
            AuditEvent(
                at: services.clock.now(), type: throttled ? AuditEvent.signInThrottled : AuditEvent.signInFailed, clientID: client.id,
                method: type.rawValue, reason: throttled ? "rate_limited" : "invalid_credentials", account: account,
                addressBlock: address, userAgent: meta.userAgent, requestID: meta.requestID))
    }

    /// A check the server had no capacity for (503) was no attempt: the counters take it back.
    private func givingBackWhenBusy<T: Sendable>(_ attempt: LoginAttempt?, _ check: () async throws -> T) async throws -> T {
        do {
            return try await check()
        } catch let error as GatehouseError where error.code == .serverBusy {
            guard let attempt else { throw error }
            let throttle = services.throttle
            try? await services.persistence.transaction { try await throttle.abandoned(attempt, stores: $0) }
            throw error
        }
    }

    /// Deletes a spent credential and ends every session it started, together.
    private func remove(_ credential: CredentialRecord, now: Date, removal: HookEvent) async throws {
        let removed = try await services.persistence.transaction { stores -> Bool in
            guard try await stores.credentials.delete(id: credential.id) else { return false }
            _ = try await stores.sessions.revokeAll(credentialID: credential.id, at: now, reason: .authenticatorRemoved)
            try await services.recordEvent(removal, stores: stores)
            return true
        }
        if removed { await services.hooks.after(removal) }
    }

}

// MARK: - Persisted flows

extension FlowRunner {
    /// A flow just begun, with the CSRF token its forms must carry (only its hash is stored).
    public struct Begun: Sendable {
        public var flow: FlowRecord
        public var csrfToken: String
    }

    /// Starts a persisted flow for `client`. The redirect URI must already be one the client registered.
    public func begin(
        _ kind: FlowKind, client: ClientRecord, redirectURI: String? = nil, pkce: PKCEChallenge? = nil, nonce: String? = nil,
        state: String? = nil, data: String? = nil, lifetime: TimeInterval? = nil
    ) async throws -> Begun {
        if let redirectURI, !client.redirectURIs.contains(redirectURI) {
            throw GatehouseError.validation(
                field: "redirect_uri", code: .invalidValue, message: "redirect_uri is not registered for this client.")
        }
        let now = services.clock.now()
        let csrf = Secrets.token(prefix: "gh_csrf_")
        let flow = FlowRecord(
            kind: kind, clientID: client.id, redirectURI: redirectURI, pkce: pkce, nonce: nonce, state: state,
            csrfHash: Secrets.sha256Hex(csrf), data: data, createdAt: now,
            expiresAt: now.addingTimeInterval(lifetime ?? services.settings.flowLifetime))
        try await services.persistence.transaction { try await $0.flows.insert(flow) }
        return Begun(flow: flow, csrfToken: csrf)
    }

    /// The open flow `id` of `kind`, once the form's CSRF token matches (compared in constant time).
    public func load(_ id: UUID, kind: FlowKind, csrfToken: String) async throws -> FlowRecord {
        let now = services.clock.now()
        guard let flow = try await services.persistence.read({ try await $0.flows.find(id: id) }), flow.kind == kind,
            flow.isOpen(at: now)
        else { throw GatehouseError.flowExpired }
        guard Secrets.constantTimeEquals(Secrets.sha256Hex(csrfToken), flow.csrfHash) else {
            throw GatehouseError.csrfMismatch
        }
        return flow
    }

    /// Moves the flow to its next step; only one caller moves it from a given step.
    public func advance(
        _ flow: FlowRecord, to next: FlowStep, userID: UUID? = nil, data: String? = nil
    ) async throws
        -> FlowRecord
    {
        let now = services.clock.now()
        let moved = try await services.persistence.transaction {
            try await $0.flows.advance(id: flow.id, from: flow.step, to: next, userID: userID, data: data, at: now)
        }
        guard moved else { throw GatehouseError.flowExpired }
        var advanced = flow
        advanced.step = next
        advanced.userID = userID ?? flow.userID
        advanced.data = data ?? flow.data
        advanced.updatedAt = now
        return advanced
    }

    /// Finishes the flow: exactly one caller gets the record; everyone else, and everyone after the
    /// expiry, gets ``GatehouseError/flowExpired``.
    public func complete(_ id: UUID) async throws -> FlowRecord {
        let now = services.clock.now()
        guard let flow = try await services.persistence.transaction({ try await $0.flows.consume(id: id, at: now) }) else {
            throw GatehouseError.flowExpired
        }
        return flow
    }
}
