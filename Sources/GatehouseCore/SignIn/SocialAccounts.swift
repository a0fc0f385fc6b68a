import Foundation
import GatehouseAPI
import Logging

/// The account rules of social sign-in, the same for a native token and the web flow. The federated
/// identity is a credential of type `oidc` whose identifier is `provider:subject`: stable even when
/// the provider's email changes.
///
/// - A known identity signs its user in (`is_new` false).
/// - An unknown identity whose verified email belongs to an account with a verified email is linked
///   to that account; if either side has not proved the address, the answer is
///   `identity_link_required` and nothing is linked (no silent takeover).
/// - Otherwise a new account is made (`is_new` true), verified only as far as the provider asserts.
struct SocialAccounts: Sendable {
    let services: CoreServices

    /// The provider, if the operator configured it and the client offers it.
    static func provider(_ id: String, for client: ClientRecord, services: CoreServices) throws -> SocialProvider {
        guard let provider = services.social.providers[id], client.settings.socialProviders.contains(provider.id) else {
            throw GatehouseError.providerNotEnabled
        }
        return provider
    }

    /// Runs a provider check: a refused token is answered alike whatever the reason (no oracle), the
    /// reason kept in the log and the audit log; a provider that cannot be reached is its outage.
    func checking<T: Sendable>(
        provider: SocialProvider, client: ClientRecord, meta: RequestMeta, _ check: () async throws -> T
    ) async throws -> T {
        do {
            return try await check()
        } catch IDTokenError.providerMisconfigured {
            services.logger.warning("provider misconfigured", metadata: ["provider": "\(provider.id)"])
            throw GatehouseError.providerUnavailable
        } catch let error as IDTokenError {
            services.logger.info(
                "provider token refused", metadata: ["provider": "\(provider.id)", "reason": "\(error)", "client_id": "\(client.id)"])
            await services.audit(
                AuditEvent(
                    at: services.clock.now(), type: AuditEvent.signInFailed, clientID: client.id, method: "social:" + provider.id,
                    reason: "\(error)", meta: meta))
            throw GatehouseError.invalidProviderToken
        } catch let error as GatehouseError {
            throw error
        } catch {
            services.logger.warning(
                "provider unavailable", metadata: ["provider": "\(provider.id)", "error": "\(String(describing: error).prefix(300))"])
            throw GatehouseError.providerUnavailable
        }
    }

    /// Finds, links or creates the account for `claims` and signs it in: hooks, audit, webhooks, the
    /// last-sign-in time, and `target` (an app session, a browser's, or an authorization code) through
    /// ``SessionStarter`` in one transaction.
    func signIn(
        claims: FederatedClaims, provider: SocialProvider, client: ClientRecord, givenName: String?, familyName: String?,
        acceptTerms: Bool = false, meta: RequestMeta, target: SessionTarget
    ) async throws -> SignedIn {
        do {
            return try await attempt(
                claims: claims, provider: provider, client: client, givenName: givenName, familyName: familyName, acceptTerms: acceptTerms,
                meta: meta, target: target)
        } catch StoreError.conflict {
            // Two first sign-ins of one identity at once (an access token sent twice): the second
            // attempt finds the identity the first made.
            return try await attempt(
                claims: claims, provider: provider, client: client, givenName: givenName, familyName: familyName, acceptTerms: acceptTerms,
                meta: meta, target: target)
        }
    }

    private func attempt(
        claims: FederatedClaims, provider: SocialProvider, client: ClientRecord, givenName: String?, familyName: String?,
        acceptTerms: Bool, meta: RequestMeta, target: SessionTarget
    ) async throws -> SignedIn {
        let now = services.clock.now()
        let (identifier, email, config) = try FederatedIdentity.of(claims, provider: provider)
        let known = try await services.persistence.read { stores -> (CredentialRecord?, UserRecord?) in
            let credential = try await stores.credentials.find(type: .oidc, identifier: identifier)
            if let credential { return (credential, try await stores.users.find(id: credential.userID)) }
            return (nil, try await email.asyncMap { try await stores.users.find(email: $0) } ?? nil)
        }
        let isNew = known.0 == nil && known.1 == nil
        if known.0 == nil, let existing = known.1, !(claims.emailVerified && existing.emailVerified) {
            throw GatehouseError.identityLinkRequired
        }
        if isNew { try await services.rateLimits.consume(.signup, ip: meta.ipAddress, persistence: services.persistence, now: now) }

        var profile = Profile()
        profile.givenName = givenName ?? claims.givenName
        profile.familyName = familyName ?? claims.familyName
        profile.name = claims.name ?? [profile.givenName, profile.familyName].compactMap { $0 }.joined(separator: " ").nilIfEmpty
        let method = "social:" + provider.id
        let changes = try await services.hooks.before(
            HookEvent(
                point: isNew ? .signup : .login, clientID: client.id, method: method, identifier: email, userID: known.1?.id,
                profile: isNew ? profile : nil, meta: meta))
        if let changed = changes.profile { profile.merge(changed) }

        let finalProfile = profile
        let starter = services.starter
        let (user, start, event) = try await services.persistence.transaction { stores -> (UserRecord, SessionStart, HookEvent) in
            var user: UserRecord
            var credentialID: String
            if let credential = try await stores.credentials.find(type: .oidc, identifier: identifier),
                let owner = try await stores.users.find(id: credential.userID)
            {
                user = owner
                credentialID = credential.id
            } else {
                if let existing = known.1 {
                    user = existing
                } else {
                    user = UserRecord(
                        email: email, emailVerified: email != nil && claims.emailVerified, profile: finalProfile,
                        appMetadata: changes.appMetadata, createdAt: now)
                    do {
                        try await stores.users.insert(user)
                    } catch StoreError.conflict {
                        // The address was taken between the read and now: the same rule as above.
                        throw GatehouseError.identityLinkRequired
                    }
                }
                let credential = CredentialRecord(userID: user.id, type: .oidc, identifiers: [identifier], config: config, createdAt: now)
                try await stores.credentials.insert(credential)
                credentialID = credential.id
            }
            guard user.state == .active else { throw GatehouseError.accountDisabled }
            if acceptTerms { try await TermsAcceptance.record(userID: user.id, client: client, at: now, stores: stores) }
            let start = try await starter.start(
                Authentication(userID: user.id, amr: [AuthenticationMethod.federated], isNew: isNew, credentialID: credentialID),
                client: client, target: target, meta: meta, stores: stores)
            let event = HookEvent(
                point: isNew ? .signup : .login, clientID: client.id, method: method, identifier: email, userID: user.id, meta: meta)
            // A sign-in waiting for its second factor has not signed in yet; a new account exists all the same.
            if start.isStarted {
                try await stores.users.recordLogin(id: user.id, at: now)
                user.lastLoginAt = now
                if !isNew, let metadata = changes.appMetadata {
                    user.appMetadata = (user.appMetadata ?? [:]).merging(metadata) { $1 }
                    try await stores.users.update(user)
                }
            }
            if isNew || start.isStarted { try await services.recordEvent(event, stores: stores) }
            return (user, start, event)
        }
        let started = try start.get()
        await services.hooks.after(event)
        return SignedIn(started: started, user: user, client: client, isNew: isNew)
    }
}

/// The stored config of a federated identity: who the provider says the user is.
struct FederatedIdentity: Codable, Sendable {
    var provider: String
    var subject: String
    /// The email the provider gave at linking time, for the user's list of identities.
    var email: String?

    /// The credential's lookup key (`provider:subject`), the provider's address if it is one, and the
    /// config to store: the same for a sign-in and a link.
    static func of(_ claims: FederatedClaims, provider: SocialProvider) throws -> (identifier: String, email: String?, config: String) {
        let email = claims.email.map(EmailAddress.normalize).flatMap { EmailAddress.isValid($0) ? $0 : nil }
        let config = try CredentialRecord.encodeConfig(FederatedIdentity(provider: provider.id, subject: claims.subject, email: email))
        return (provider.id + ":" + claims.subject, email, config)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
