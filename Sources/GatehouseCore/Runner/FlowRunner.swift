import Foundation
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
        /// Accepts the client's current terms with this sign-in.
        public var acceptTerms: Bool
        public var meta: RequestMeta

        public init(
            clientID: String?, scope: String? = nil, nonce: String? = nil, customData: String? = nil, acceptTerms: Bool = false,
            meta: RequestMeta
        ) {
            self.clientID = clientID
            self.scope = scope
            self.nonce = nonce
            self.customData = customData
            self.acceptTerms = acceptTerms
            self.meta = meta
        }
    }

    /// Signs a user in with `strategy` and answers with an app session's tokens.
    public func signIn<S: SignInStrategy>(_ strategy: S, submission: S.Submission, request: SignInRequest) async throws -> TokenResponse {
        let client = try await services.clients.resolve(request.clientID)
        let target = SessionTarget.app(.init(scopes: SessionIssuer.grant(requested: request.scope, client: client), nonce: request.nonce))
        let signedIn = try await signIn(strategy, submission: submission, request: request, target: target)
        let started = try signedIn.started.app()
        return try await services.issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: signedIn.client, user: signedIn.user,
            isNew: signedIn.isNew, nonce: request.nonce)
    }

    /// Signs a user in with a stored credential (a password, a device key) and answers with tokens.
    public func signIn<S: CredentialStrategy>(
        with strategy: S, submission: S.Submission, request: SignInRequest
    ) async throws -> TokenResponse {
        try await signIn(StoredCredentialSignIn(strategy: strategy, services: services), submission: submission, request: request)
    }

    /// Signs a user in with a stored credential, starting `target`.
    public func signIn<S: CredentialStrategy>(
        with strategy: S, submission: S.Submission, request: SignInRequest, target: SessionTarget
    ) async throws -> SignedIn {
        try await signIn(
            StoredCredentialSignIn(strategy: strategy, services: services), submission: submission, request: request, target: target)
    }

    /// The one sign-in pipeline, the same for every method: the client, what the strategy counts and
    /// finds, the before-hook (told the user whenever the strategy knows them), the strategy's check,
    /// then in one transaction the account (found, created or linked by the strategy), its state, the
    /// client's rules, terms, `target` through ``SessionStarter``'s gate, the last-sign-in time, the
    /// hook's `app_metadata`, the audit row and webhooks; then the after-hook.
    public func signIn<S: SignInStrategy>(
        _ strategy: S, submission: S.Submission, request: SignInRequest, target: SessionTarget
    ) async throws -> SignedIn {
        let client = try await services.clients.resolve(request.clientID)
        if let nonce = request.nonce, nonce.count > 256 {
            throw GatehouseError.validation(field: "nonce", code: .tooLong, message: "Use at most 256 characters.")
        }
        let meta = request.meta
        if let action = strategy.botChallenge { try await services.botChallenge.require(action, client: client, meta: meta) }
        let hooks = services.hooks
        // The before-hook runs inside too: a place is held from the first count to the check.
        let (admitted, changes, proof) = try await strategy.holdingCapacity { () async throws -> (S.Admitted, HookChanges, S.Proof) in
            let admitted = try await strategy.admit(submission, client: client, meta: meta, hooked: hooks.hasBeforeHooks)
            let hook = strategy.beforeHook(admitted)
            let changes: HookChanges
            do {
                changes = try await hooks.before(
                    HookEvent(
                        point: hook.point, clientID: client.id, method: hook.method, identifier: hook.identifier, userID: hook.userID,
                        profile: hook.profile, customData: request.customData ?? hook.customData, meta: meta))
            } catch {
                await strategy.abandon(admitted)
                throw error
            }
            return (admitted, changes, try await strategy.prove(submission, admitted: admitted, client: client, meta: meta))
        }

        let now = services.clock.now()
        let starter = services.starter
        let acceptTerms = request.acceptTerms
        let (match, start, event) = try await givingBackOnRefusal(strategy, admitted) {
            try await services.persistence.transaction { stores -> (AccountMatch, SessionStart, HookEvent?) in
                var match = try await strategy.account(for: proof, changes: changes, client: client, now: now, stores: stores)
                guard match.user.state == .active else { throw GatehouseError.accountDisabled }
                if client.settings.emailVerification == .required, !match.provesIdentifier, !match.user.emailVerified {
                    throw GatehouseError.emailNotVerified
                }
                if acceptTerms { try await TermsAcceptance.record(userID: match.user.id, client: client, at: now, stores: stores) }
                let authentication = Authentication(
                    userID: match.user.id, amr: match.amr, isNew: match.isNew, credentialID: match.credentialID)
                let start = try await starter.start(authentication, client: client, target: target, meta: meta, stores: stores)
                // A sign-in waiting for its second factor has not signed in yet; what it made or proved stands.
                if start.isStarted {
                    try await stores.users.recordLogin(id: match.user.id, at: now)
                    match.user.lastLoginAt = now
                    if let metadata = changes.appMetadata, var current = try await stores.users.find(id: match.user.id) {
                        current.appMetadata = (current.appMetadata ?? [:]).merging(metadata) { $1 }
                        try await stores.users.update(current)
                        match.user.appMetadata = current.appMetadata
                    }
                }
                // Last before the commit: the throttle's counters are shared by every sign-in from the
                // address, and holding them across the session's start queued those sign-ins (and the
                // connections they hold) behind this one.
                let throttle = services.throttle
                guard start.isStarted || match.standsAlone || match.isNew else {
                    if let attempt = match.attempt { try await throttle.succeeded(attempt, stores: stores) }
                    return (match, start, nil)
                }
                let event = HookEvent(
                    point: match.point, clientID: client.id, method: match.method, identifier: match.identifier, userID: match.user.id,
                    meta: meta)
                try await services.recordEvent(event, stores: stores)
                if let attempt = match.attempt { try await throttle.succeeded(attempt, stores: stores) }
                return (match, start, event)
            }
        }
        if let event { await hooks.after(event) }
        return SignedIn(started: try start.get(), user: match.user, client: client, isNew: match.isNew)
    }

    /// Runs the sign-in's last transaction. The credential was right by then, so whatever refuses the
    /// sign-in there (the account's state, the client's rules, a storage fault) made no failed guess:
    /// what the strategy counted goes back, or a person whose address is not yet verified would be
    /// locked out (429) by their own right password. Only when the transaction fails: once it commits,
    /// its own give-back (``LoginThrottle/succeeded(_:stores:)``) has run.
    private func givingBackOnRefusal<S: SignInStrategy, T: Sendable>(
        _ strategy: S, _ admitted: S.Admitted, _ transaction: () async throws -> T
    ) async throws -> T {
        do {
            return try await transaction()
        } catch {
            await strategy.abandon(admitted)
            throw error
        }
    }
}
