import Foundation
import GatehouseAPI

/// The signed-in user's second factors: enrol an authenticator app (confirmed by a first code before
/// it counts), list, remove, and regenerate recovery codes. Changing factors is sensitive: it needs a
/// recent sign-in, and one that passed the second factor when the user has one.
public struct FactorsFlow: Sendable {
    let services: CoreServices

    /// How recent a sign-in must be to change factors.
    public static let recentSignIn = RecentSignIn.window

    public init(services: CoreServices) { self.services = services }

    /// A new authenticator app: a random 160-bit secret, sealed under the server secret, and the URI an
    /// app reads. An earlier unconfirmed one is replaced; a confirmed one must be removed first.
    public func enrolTOTP(_ principal: Principal, meta: RequestMeta) async throws -> TOTPEnrolment {
        try await requireRecentSignIn(principal)
        return try await Self.enrolTOTP(for: principal.user, services: services)
    }

    /// Writes a new unconfirmed authenticator app for `user` in place of any earlier unconfirmed one;
    /// refused while a confirmed one exists. Shared by the signed-in user's enrolment and the one a
    /// sign-in that requires a factor leads to. `reuse`: an app still waiting for its first code is
    /// shown again rather than replaced (a reloaded enrolment page keeps its QR code).
    static func enrolTOTP(for user: UserRecord, services: CoreServices, reuse: Bool = false) async throws -> TOTPEnrolment {
        let now = services.clock.now()
        let key = Data(Secrets.randomBytes(TOTP.secretLength))
        let config = TOTPFactor.Config(sealedSecret: try services.secret.seal(key), confirmed: false, lastStep: nil)
        let credential = CredentialRecord(
            userID: user.id, type: .totp, identifiers: ["totp:" + UUID().uuidString.lowercased()],
            config: try CredentialRecord.encodeConfig(config), createdAt: now)
        let secret = services.secret
        let (id, shownKey) = try await services.persistence.transaction { stores -> (String, Data) in
            for existing in try await stores.credentials.list(userID: user.id, type: .totp) {
                guard let config = try? existing.decodeConfig(TOTPFactor.Config.self) else { continue }
                if config.confirmed {
                    throw GatehouseError.validation(
                        field: "type", code: .invalidValue, message: "Remove the current authenticator app before adding another.")
                }
                if reuse, let kept = try? secret.open(config.sealedSecret) { return (existing.id, kept) }
                _ = try await stores.credentials.delete(id: existing.id)
            }
            try await stores.credentials.insert(credential)
            return (credential.id, key)
        }
        let issuer = URLComponents(string: services.settings.publicURL)?.host ?? "Gatehouse"
        return TOTPEnrolment(
            id: id, secret: Base32.encode(shownKey),
            otpauthUri: TOTP.uri(secret: shownKey, issuer: issuer, account: user.email ?? user.phone ?? user.id.uuidString.lowercased()))
    }

    /// A confirmed factor's aftermath, in the confirming transaction: the user's first factor gets its
    /// recovery codes (returned, to be shown once), and the enrolment is recorded (audit, webhook).
    static func confirmed(
        userID: UUID, clientID: String, services: CoreServices, meta: RequestMeta, stores: any Stores
    ) async throws -> [String]? {
        var codes: [String]?
        if try await stores.credentials.list(userID: userID, type: .recoveryCode).isEmpty {
            let recovery = RecoveryCodeFactor(secret: services.secret, clock: services.clock)
            codes = try await issueRecoveryCodes(for: userID, factor: recovery, now: services.clock.now(), stores: stores)
        }
        try await services.recordEvent(
            HookEvent(point: .factorEnrolment, clientID: clientID, method: "totp", userID: userID, meta: meta), stores: stores)
        return codes
    }

    /// The first code from the app confirms it; the user's first factor also gets its recovery codes,
    /// shown here once.
    public func confirm(_ principal: Principal, id: String, code: String, meta: RequestMeta) async throws -> FactorConfirmed {
        let user = principal.user
        let now = services.clock.now()
        let factor = TOTPFactor(secret: services.secret, clock: services.clock)
        let services = services
        // Counted like a sign-in's second factor: the account's answers are bounded whatever the route.
        let accountKey = FactorAttempts.key(user.id)
        let count = try await services.persistence.transaction {
            try await $0.attempts.recordFailure(key: accountKey, now: now, window: FactorAttempts.window)
        }
        if count.count > FactorAttempts.maxPerAccount {
            throw GatehouseError.rateLimited(retryAfter: RateLimiter.secondsLeft(count, window: FactorAttempts.window, now: now))
        }
        let outcome = try await services.persistence.transaction { stores -> (CredentialRecord, [String]?)? in
            guard let credential = try await stores.credentials.find(id: id), credential.userID == user.id, credential.type == .totp,
                let config = try? credential.decodeConfig(TOTPFactor.Config.self), !config.confirmed
            else { throw GatehouseError.notFound("No authenticator app waits for confirmation under this id.") }
            guard try await factor.accept(code, credential: credential, config: config, now: now, stores: stores) else { return nil }
            try await stores.attempts.reset(key: accountKey)
            let codes = try await Self.confirmed(
                userID: user.id, clientID: principal.session.clientID, services: services, meta: meta, stores: stores)
            return (credential, codes)
        }
        guard let (credential, codes) = outcome else {
            throw GatehouseError.invalidCode(remaining: max(FactorAttempts.maxPerAccount - count.count, 0))
        }
        return FactorConfirmed(
            factor: FactorInfo(id: credential.id, type: "totp", confirmed: true, createdAt: credential.createdAt), recoveryCodes: codes)
    }

    public func list(_ principal: Principal) async throws -> FactorList {
        Self.factorList(try await services.persistence.read { try await $0.credentials.list(userID: principal.user.id, type: nil) })
    }

    /// A user's factors as the user and operators see them: kinds and dates, never a secret.
    static func factorList(_ credentials: [CredentialRecord]) -> FactorList {
        let factors = credentials.compactMap { credential -> FactorInfo? in
            switch credential.type {
            case .totp:
                FactorInfo(
                    id: credential.id, type: "totp",
                    confirmed: (try? credential.decodeConfig(TOTPFactor.Config.self))?.confirmed ?? false, createdAt: credential.createdAt)
            case .passkey:
                FactorInfo(
                    id: credential.id, type: PasskeyFactor.factorID, confirmed: true, createdAt: credential.createdAt,
                    name: (try? credential.decodeConfig(PasskeyStrategy.Config.self))?.name)
            default: nil
            }
        }
        return FactorList(factors: factors, recoveryCodesLeft: credentials.filter { $0.type == .recoveryCode }.count)
    }

    /// Removes an authenticator app; with the last one go the recovery codes (they are no factor alone).
    /// A passkey is removed as ``PasskeysFlow/remove(_:id:meta:)`` does.
    public func remove(_ principal: Principal, id: String, meta: RequestMeta) async throws {
        try await requireRecentSignIn(principal)
        let user = principal.user
        if try await services.persistence.read({ try await $0.credentials.find(id: id) }).map({
            $0.userID == user.id && $0.type == .passkey
        })
            == true
        {
            return try await PasskeysFlow.remove(id, userID: user.id, clientID: principal.session.clientID, meta: meta, services: services)
        }
        try await services.persistence.transaction { stores in
            guard let credential = try await stores.credentials.find(id: id), credential.userID == user.id, credential.type == .totp,
                try await stores.credentials.delete(id: id)
            else { throw GatehouseError.notFound("No such factor.") }
            if try await stores.credentials.list(userID: user.id, type: .totp).isEmpty {
                _ = try await stores.credentials.deleteAll(userID: user.id, type: .recoveryCode)
            }
            try await services.recordEvent(
                HookEvent(point: .factorRemoval, clientID: principal.session.clientID, method: "totp", userID: user.id, meta: meta),
                stores: stores)
        }
    }

    /// A new set of recovery codes, shown once; the old set stops working.
    public func regenerateRecoveryCodes(_ principal: Principal, meta: RequestMeta) async throws -> RecoveryCodes {
        try await requireRecentSignIn(principal)
        let user = principal.user
        let now = services.clock.now()
        let recovery = RecoveryCodeFactor(secret: services.secret, clock: services.clock)
        let codes = try await services.persistence.transaction { stores -> [String] in
            guard try await !FactorPolicy.enrolledFactors(userID: user.id, stores: stores).isEmpty else {
                throw GatehouseError.validation(
                    field: nil, code: .invalidValue, message: "Add an authenticator app first: recovery codes stand in for it.")
            }
            _ = try await stores.credentials.deleteAll(userID: user.id, type: .recoveryCode)
            let codes = try await Self.issueRecoveryCodes(for: user.id, factor: recovery, now: now, stores: stores)
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.recoveryCodesRegenerated, userID: user.id, clientID: principal.session.clientID,
                    method: "recovery_code", meta: meta))
            return codes
        }
        return RecoveryCodes(codes: codes)
    }

    static func issueRecoveryCodes(
        for userID: UUID, factor: RecoveryCodeFactor, now: Date, stores: any Stores
    ) async throws -> [String] {
        var codes: [String] = []
        for _ in 0..<RecoveryCodeFactor.count {
            let code = RecoveryCodeFactor.generate()
            try await stores.credentials.insert(
                CredentialRecord(
                    userID: userID, type: .recoveryCode, identifiers: [factor.identifier(of: code, userID: userID)], config: "{}",
                    createdAt: now))
            codes.append(code)
        }
        return codes
    }

    /// A recent sign-in; when the user has a factor, one that passed it (`amr` holds `mfa`).
    func requireRecentSignIn(_ principal: Principal) async throws {
        let now = services.clock.now()
        guard now.timeIntervalSince(principal.session.createdAt) <= Self.recentSignIn else {
            throw GatehouseError.reauthenticationRequired
        }
        try await Self.requireSecondLevel(principal, services: services)
    }

    /// For a sensitive change (a password, a linked identity, a factor): a user with a factor must act
    /// from a session that passed it. Sessions of such a user start only through the gate, so this
    /// refuses exactly the sessions from before the factor was added (a token stolen then).
    static func requireSecondLevel(_ principal: Principal, services: CoreServices) async throws {
        guard !principal.session.amr.contains(AuthenticationMethod.multiFactor) else { return }
        let userID = principal.user.id
        let enrolled = try await services.persistence.read { try await FactorPolicy.enrolledFactors(userID: userID, stores: $0) }
        if !enrolled.isEmpty { throw GatehouseError.reauthenticationRequired }
    }
}
