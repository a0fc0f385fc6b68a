import Foundation
import GatehouseAPI

/// The signed-in user's provider identities: list, link (proved by a provider token, as a sign-in
/// would be) and unlink (never the account's last way to sign in).
public struct IdentitiesFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// How recent the session's sign-in must be to add a way to sign in: a stolen access token of an
    /// old session must not let its holder add their own provider account (as changing the password
    /// needs the current one).
    public static let recentSignIn: TimeInterval = 15 * 60

    /// The identities without their kept profiles (`GET /v1/me`'s summary).
    public func list(userID: UUID) async throws -> [LinkedIdentity] {
        try await list(userID: userID, profiles: false)
    }

    /// `GET /v1/me/identities`: with the kept profiles, for a first-party client (a third party's
    /// consent does not cover what another provider said about the user).
    public func list(_ principal: Principal) async throws -> [LinkedIdentity] {
        let client = try await services.clients.resolve(principal.session.clientID)
        return try await list(userID: principal.user.id, profiles: !client.settings.thirdParty.isOn)
    }

    private func list(userID: UUID, profiles: Bool) async throws -> [LinkedIdentity] {
        let credentials = try await services.persistence.read { try await $0.credentials.list(userID: userID, type: .oidc) }
        return credentials.compactMap { credential in
            var identity = Self.identity(credential)
            if !profiles { identity?.profile = nil }
            return identity
        }
    }

    /// Links the provider account the token names. Linking the same account again changes nothing;
    /// one linked to another user is refused (`identity_in_use`): unlink it there first.
    /// A provider account to link, as the core takes it: the provider's token, as for a sign-in.
    public struct Link: Sendable {
        public var provider: String
        public var idToken: String?
        public var accessToken: String?
        /// The raw nonce an ID token was requested with.
        public var nonce: String?

        public init(provider: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil) {
            self.provider = provider
            self.idToken = idToken
            self.accessToken = accessToken
            self.nonce = nonce
        }
    }

    public func link(
        _ principal: Principal, _ request: Link, meta: RequestMeta
    ) async throws -> (LinkedIdentity, created: Bool) {
        guard SocialProvider.isValidID(request.provider) else { throw GatehouseError.providerNotEnabled }
        guard services.clock.now().timeIntervalSince(principal.session.createdAt) <= Self.recentSignIn else {
            throw GatehouseError.reauthenticationRequired
        }
        try await FactorsFlow.requireSecondLevel(principal, services: services)
        let client = try await services.clients.resolve(principal.session.clientID)
        let provider = try SocialAccounts.provider(request.provider, for: client, services: services)
        let claims = try await SocialSignInFlow(services: services).verify(
            SocialSignInFlow.Request(
                providerID: provider.id, idToken: request.idToken, accessToken: request.accessToken, nonce: request.nonce,
                clientID: client.id, meta: meta),
            provider: provider, client: client)
        let (identifier, _, config) = try FederatedIdentity.of(claims, provider: provider, secret: services.secret)
        let userID = principal.user.id
        let now = services.clock.now()
        let insert = { @Sendable () async throws -> (CredentialRecord, Bool) in
            try await services.persistence.transaction { stores -> (CredentialRecord, Bool) in
                if let existing = try await stores.credentials.find(type: .oidc, identifier: identifier) {
                    guard existing.userID == userID else { throw GatehouseError.identityInUse }
                    return (existing, false)
                }
                let credential = CredentialRecord(userID: userID, type: .oidc, identifiers: [identifier], config: config, createdAt: now)
                try await stores.credentials.insert(credential)
                try await stores.audit.append(
                    event("identity.linked", userID: userID, client: client.id, provider: provider.id, meta: meta))
                // A provider is a way back in: an anonymous account becomes permanent with it.
                if principal.user.isAnonymous, var user = try await stores.users.find(id: userID) {
                    try await AnonymousAccountsFlow.makePermanent(&user, amr: [AuthenticationMethod.federated], now: now, stores: stores)
                }
                return (credential, true)
            }
        }
        let credential: CredentialRecord
        let created: Bool
        do {
            (credential, created) = try await insert()
        } catch StoreError.conflict {
            // Linked at the same moment by another request: the second look says by whom.
            (credential, created) = try await insert()
        }
        guard let identity = Self.identity(credential) else { throw GatehouseError.internalFailure() }
        return (identity, created)
    }

    /// Removes a link, unless nothing else (a password, another provider) would sign the user in, and
    /// ends the sessions it started (a hijacked provider account is unlinked to get rid of them).
    public func unlink(_ principal: Principal, id: String, meta: RequestMeta) async throws {
        let userID = principal.user.id
        let clientID = principal.session.clientID
        let now = services.clock.now()
        try await services.persistence.transaction { stores in
            // Writing the user's row first makes concurrent unlinks of one user take turns (PostgreSQL
            // reads committed rows per statement): the second then counts without the first's link.
            guard var user = try await stores.users.find(id: userID) else { throw GatehouseError.notFound("No such identity.") }
            user.updatedAt = now
            try await stores.users.update(user)
            guard let credential = try await stores.credentials.find(id: id), credential.userID == userID, credential.type == .oidc else {
                throw GatehouseError.notFound("No such identity.")
            }
            let others = try await stores.credentials.list(userID: userID, type: nil)
                .filter { $0.id != credential.id && SignInMethods.standsAlone($0.type) }
            guard !others.isEmpty else { throw GatehouseError.lastSignInMethod }
            _ = try await stores.credentials.delete(id: credential.id)
            try await stores.announceEnd(of: userID, at: now, notices: services.notices) { $0.credentialID == credential.id }
            _ = try await stores.sessions.revokeAll(credentialID: credential.id, at: now, reason: .identityUnlinked)
            // A browser session does not record its credential: every one of the user's ends, so none
            // the unlinked provider signed in survives (the others sign in again).
            _ = try await stores.browserSessions.revokeAll(userID: userID, at: now)
            let provider = (try? credential.decodeConfig(FederatedIdentity.self))?.provider
            try await stores.audit.append(event("identity.unlinked", userID: userID, client: clientID, provider: provider, meta: meta))
        }
    }

    private func event(_ type: String, userID: UUID, client: String, provider: String?, meta: RequestMeta) -> AuditEvent {
        AuditEvent(
            at: services.clock.now(), type: type, userID: userID, clientID: client, method: provider.map { "social:" + $0 },
            meta: meta)
    }

    static func identity(_ credential: CredentialRecord) -> LinkedIdentity? {
        guard let config = try? credential.decodeConfig(FederatedIdentity.self) else { return nil }
        return LinkedIdentity(
            id: credential.id, provider: config.provider, subject: config.subject, email: config.email, linkedAt: credential.createdAt,
            profile: config.profile)
    }
}
