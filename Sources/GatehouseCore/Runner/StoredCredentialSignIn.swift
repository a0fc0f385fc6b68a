import Foundation
import GatehouseAPI
import Logging

/// A credential the server stores and checks (a password, a device key) as a sign-in the runner runs:
/// the account-and-address throttle, the lookup by identifier, the same work for an unknown
/// identifier, and the credential's own failure count, counted before it is checked.
struct StoredCredentialSignIn<Strategy: CredentialStrategy>: SignInStrategy {
    let strategy: Strategy
    let services: CoreServices

    var botChallenge: BotChallenge.Action? { strategy.type == .password ? .signin : nil }

    struct Admitted: Sendable {
        var identifier: String
        /// What hooks, the log and the audit log may see: never a value derived from a key or a secret.
        var shown: String?
        var attempt: LoginAttempt?
        var found: (user: UserRecord, credential: CredentialRecord)?
    }

    struct Proof: Sendable {
        var user: UserRecord
        var credential: CredentialRecord
        var upgradedConfig: String?
        var reserved: Int?
        var attempt: LoginAttempt?
        var shown: String?
    }

    func admit(_ submission: Strategy.Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Admitted {
        let identifier = try strategy.identifier(of: submission)
        let shown = strategy.shownIdentifier(of: submission)
        let now = services.clock.now()
        let throttle = services.throttle
        // Counted before anything is looked up or checked: a refusal later gives the count back.
        let attempt: LoginAttempt?
        do {
            attempt =
                strategy.usesSignInThrottle
                ? try await services.persistence.transaction { stores in
                    try await throttle.begin(email: identifier, ip: meta.ipAddress, stores: stores, now: now)
                } : nil
        } catch let error as GatehouseError where error.code == .rateLimited {
            await logFailure("sign-in throttled", client: client, account: shown, meta: meta, throttled: true)
            throw error
        }
        let type = strategy.type
        let found = try await services.persistence.read { stores -> (UserRecord, CredentialRecord)? in
            guard let credential = try await stores.credentials.find(type: type, identifier: identifier),
                let user = try await stores.users.find(id: credential.userID)
            else { return nil }
            return (user, credential)
        }
        return Admitted(identifier: identifier, shown: shown, attempt: attempt, found: found)
    }

    func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await strategy.holdingCapacity(body)
    }

    func beforeHook(_ admitted: Admitted) -> SignInHook {
        SignInHook(point: .login, method: strategy.type.rawValue, identifier: admitted.shown, userID: admitted.found?.user.id)
    }

    func abandon(_ admitted: Admitted) async {
        guard let attempt = admitted.attempt else { return }
        let throttle = services.throttle
        try? await services.persistence.transaction { try await throttle.abandoned(attempt, stores: $0) }
    }

    func prove(_ submission: Strategy.Submission, admitted: Admitted, client: ClientRecord, meta: RequestMeta) async throws -> Proof {
        let now = services.clock.now()
        let shown = admitted.shown
        // Unknown identifier and wrong secret do the same work and give the same answer.
        guard let (user, credential) = admitted.found else {
            try await givingBackWhenBusy(admitted) { try await strategy.verifyUnknown(submission) }
            try await countFailure(admitted, now: now)
            await logFailure("sign-in failed", client: client, account: shown, meta: meta)
            throw GatehouseError.invalidCredentials
        }
        let limit = strategy.failureLimit(for: credential, client: client)
        let removal = HookEvent(
            point: .authenticatorRemoval, clientID: client.id, method: strategy.type.rawValue, identifier: shown,
            userID: credential.userID, meta: meta)
        let reserved: Int? =
            if let limit { try await reserveAttempt(on: credential, limit: limit, now: now, removal: removal) } else { nil }
        let verification = try await givingBackWhenBusy(admitted) { try await strategy.verify(submission, against: credential) }
        guard case .verified(let upgradedConfig) = verification else {
            // The throttle counted this attempt already; the credential keeps its own count too, first:
            // it decides removal and flags, and the address block's count cannot stand in its way.
            if let limit, let reserved {
                do {
                    try await rejectLimited(credential, limit: limit, reserved: reserved, now: now, removal: removal)
                } catch {
                    try? await countFailure(admitted, now: now)
                    throw error
                }
            }
            _ = try await services.persistence.transaction { stores in
                if case .flagged(let config) = verification {
                    var flagged = credential
                    flagged.config = config
                    flagged.updatedAt = now
                    try await stores.credentials.update(flagged)
                    try await stores.audit.append(
                        AuditEvent(
                            at: now, type: AuditEvent.credentialFlagged, userID: credential.userID, clientID: client.id,
                            method: strategy.type.rawValue, meta: meta))
                }
                return try await stores.credentials.recordFailure(id: credential.id, at: now)
            }
            try await countFailure(admitted, now: now)
            await logFailure("sign-in failed", client: client, account: shown, meta: meta)
            throw GatehouseError.invalidCredentials
        }
        do {
            guard user.state == .active else { throw GatehouseError.accountDisabled }
            if client.settings.emailVerification == .required, !strategy.provesIdentifier, !user.emailVerified {
                throw GatehouseError.emailNotVerified
            }
        } catch {
            // The secret was right: a counted attempt is not a failure, on the credential or the throttle.
            if reserved != nil {
                _ = try? await services.persistence.transaction { try await $0.credentials.resetFailures(id: credential.id) }
            }
            await abandon(admitted)
            throw error
        }
        return Proof(
            user: user, credential: credential, upgradedConfig: upgradedConfig, reserved: reserved, attempt: admitted.attempt, shown: shown)
    }

    func account(
        for proof: Proof, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch {
        let credential = proof.credential
        if let upgradedConfig = proof.upgradedConfig {
            var upgraded = credential
            upgraded.config = upgradedConfig
            upgraded.updatedAt = now
            try await stores.credentials.update(upgraded)
        }
        // A counted attempt always resets, and finds out here whether its credential survived the
        // attempts that ran beside it.
        if proof.reserved != nil || credential.failureCount > 0 {
            guard try await stores.credentials.resetFailures(id: credential.id) else { throw GatehouseError.deviceDeregistered() }
        }
        var match = AccountMatch(
            user: proof.user, amr: strategy.amr(for: credential), credentialID: credential.id, provesIdentifier: strategy.provesIdentifier,
            point: .login, method: strategy.type.rawValue, identifier: proof.shown)
        match.attempt = proof.attempt
        return match
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
        _ message: Logger.Message, client: ClientRecord, account shown: String?, meta: RequestMeta, throttled: Bool = false
    ) async {
        let account = shown.map(AuditEvent.account(of:))
        let address = meta.ipAddress.map(AddressBlock.of)
        services.logger.info(
            message,
            metadata: [
                "method": "\(strategy.type)", "client": "\(client.id)", "account": "\(account ?? "-")", "address": "\(address ?? "-")",
            ])
        await services.audit(
            AuditEvent(
                at: services.clock.now(), type: throttled ? AuditEvent.signInThrottled : AuditEvent.signInFailed, clientID: client.id,
                method: strategy.type.rawValue, reason: throttled ? "rate_limited" : "invalid_credentials", account: account,
                addressBlock: address, userAgent: meta.userAgent, requestID: meta.requestID))
    }

    /// A failed attempt counts on its address block (the account's counters have it already), in a
    /// statement of its own: the block's row is shared by every sign-in from there.
    private func countFailure(_ admitted: Admitted, now: Date) async throws {
        guard let attempt = admitted.attempt else { return }
        let throttle = services.throttle
        try await services.persistence.write { try await throttle.failed(attempt, stores: $0, now: now) }
    }

    /// A check the server had no capacity for (503) was no attempt: the counters take it back.
    private func givingBackWhenBusy<T: Sendable>(_ admitted: Admitted, _ check: () async throws -> T) async throws -> T {
        try await services.throttle.givingBackWhenBusy(admitted.attempt, persistence: services.persistence, check)
    }

    /// Deletes a spent credential and ends every session it started, together.
    private func remove(_ credential: CredentialRecord, now: Date, removal: HookEvent) async throws {
        let removed = try await services.persistence.transaction { stores -> Bool in
            guard try await stores.credentials.delete(id: credential.id) else { return false }
            try await stores.announceEnd(of: credential.userID, at: now, notices: services.notices) { $0.credentialID == credential.id }
            _ = try await stores.sessions.revokeAll(credentialID: credential.id, at: now, reason: .authenticatorRemoved)
            try await services.recordEvent(removal, stores: stores)
            return true
        }
        if removed { await services.hooks.after(removal) }
    }
}
