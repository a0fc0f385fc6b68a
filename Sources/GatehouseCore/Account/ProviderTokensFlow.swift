import Foundation
import GatehouseAPI
import Logging

/// The provider's access token for one of the signed-in user's identities, for the app to call the
/// provider's API as the person (the Backbeam seed's "social token"). Kept only where the operator
/// opted in (``SocialProvider/keepTokens``), handed only over the app's own session (checked against
/// its row on every request) to a first-party client that offers the provider, and refreshed at the
/// provider when it has expired; the refresh token never leaves the server.
public struct ProviderTokensFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func accessToken(_ principal: Principal, identityID: String, meta: RequestMeta) async throws -> ProviderAccessToken {
        let now = services.clock.now()
        let (credential, identity) = try await stored(identityID, userID: principal.user.id)
        let client = try await services.clients.resolve(principal.session.clientID)
        // The user consented to a third party's scopes, not to handing it their account at another
        // provider.
        guard !client.settings.thirdParty.isOn else {
            throw GatehouseError.forbidden("A third-party client cannot read the user's provider tokens.")
        }
        guard let provider = services.social.providers[identity.provider], provider.keepTokens,
            client.settings.socialProviders.contains(provider.id),
            let sealed = identity.sealedTokens, var grant = try? ProviderGrant.opened(sealed, with: services.secret)
        else { throw GatehouseError.providerTokenUnavailable }
        if !grant.isFresh(at: now) {
            // Audited when the provider is asked (a read is a read path, as `/v1/me`, and is not).
            let userID = principal.user.id
            let event = { @Sendable (type: String) in
                AuditEvent(at: now, type: type, userID: userID, clientID: client.id, method: "social:" + provider.id, meta: meta)
            }
            let stale = grant
            grant = try await ProviderRefreshes.shared.run(credential.id) {
                try await refreshed(stale, sealed: sealed, credential: credential, provider: provider, now: now, event: event)
            }
        }
        return ProviderAccessToken(
            identityID: credential.id, provider: provider.id, accessToken: grant.accessToken, tokenType: grant.tokenType ?? "Bearer",
            expiresAt: grant.expiresAt, scope: grant.scope)
    }

    private func stored(_ id: String, userID: UUID) async throws -> (CredentialRecord, FederatedIdentity) {
        guard id.count <= 64, let credential = try await services.persistence.read({ try await $0.credentials.find(id: id) }),
            credential.userID == userID, credential.type == .oidc, let identity = try? credential.decodeConfig(FederatedIdentity.self)
        else { throw GatehouseError.notFound("No such identity.") }
        return (credential, identity)
    }

    /// A new access token from the provider for the kept refresh token. Two requests (or nodes) may
    /// refresh at once; ``settle(_:read:in:audit:)`` decides whose tokens stay.
    private func refreshed(
        _ grant: ProviderGrant, sealed: String, credential: CredentialRecord, provider: SocialProvider, now: Date,
        event: @Sendable (String) -> AuditEvent
    ) async throws -> ProviderGrant {
        // A read that saw the old tokens may arrive after another request's refresh finished: the
        // stored tokens are new then, and the provider is not asked again.
        if let current = try await services.persistence.read({ try await $0.credentials.find(id: credential.id) }),
            let stored = (try? current.decodeConfig(FederatedIdentity.self))?.sealedTokens, stored != sealed,
            let theirs = try? ProviderGrant.opened(stored, with: services.secret), theirs.isFresh(at: now)
        {
            return theirs
        }
        guard let refreshToken = grant.refreshToken, let http = services.social.http else { throw GatehouseError.providerTokenUnavailable }
        let tokens: ProviderAPI.Tokens
        do {
            let endpoints = try await services.social.verifier?.cache.endpoints(provider) ?? provider.endpoints
            guard let tokenURL = endpoints.token else { throw IDTokenError.providerMisconfigured }
            tokens = try await ProviderAPI(http: http).refresh(refreshToken, provider: provider, tokenURL: tokenURL, now: now)
        } catch IDTokenError.codeRefused {
            // Revoked by the person, expired, or spent by another request's refresh a moment ago.
            if let theirs = try await settle(nil, read: sealed, in: credential.id, audit: event("identity.token_refresh_refused")) {
                return theirs
            }
            services.logger.info("provider refused a kept refresh token", metadata: ["provider": "\(provider.id)"])
            throw GatehouseError.providerTokenUnavailable
        } catch let error as GatehouseError {
            throw error
        } catch {
            // The error names the provider's status or shape, never a token.
            services.logger.warning(
                "provider token refresh failed",
                metadata: ["provider": "\(provider.id)", "error": "\(String(describing: error).prefix(300))"])
            throw GatehouseError.providerRefreshUnavailable
        }
        guard let next = ProviderGrant(tokens, now: now, previous: grant) else { throw GatehouseError.providerRefreshUnavailable }
        return try await settle(next, read: sealed, in: credential.id, audit: event("identity.token_refreshed")) ?? next
    }

    /// Stores the outcome of a refresh of the tokens read as `read`: `next` (new tokens) or nil (the
    /// provider refused; the kept tokens go), and records `audit`. The identity's row is locked first
    /// (PostgreSQL reads committed rows per statement), so concurrent refreshes take turns here. When
    /// another request stored usable tokens meanwhile, those stand and are answered (a provider that
    /// rotates refresh tokens has spent ours); when it stored none or stale ones (its refresh was
    /// refused, or `secret rotate` resealed the old ones), new tokens are written over them and a
    /// refusal deletes nothing. An identity unlinked meanwhile gets nothing.
    private func settle(_ next: ProviderGrant?, read: String, in credentialID: String, audit: AuditEvent) async throws -> ProviderGrant? {
        let secret = services.secret
        let now = services.clock.now()
        return try await services.persistence.transaction { stores -> ProviderGrant? in
            guard var locked = try await stores.credentials.find(id: credentialID) else {
                throw GatehouseError.notFound("No such identity.")
            }
            locked.updatedAt = now
            try await stores.credentials.update(locked)
            guard var credential = try await stores.credentials.find(id: credentialID),
                var identity = try? credential.decodeConfig(FederatedIdentity.self)
            else { throw GatehouseError.notFound("No such identity.") }
            if identity.sealedTokens != read {
                if let theirs = identity.sealedTokens.flatMap({ try? ProviderGrant.opened($0, with: secret) }), theirs.isFresh(at: now) {
                    return theirs
                }
                guard next != nil else { throw GatehouseError.providerTokenUnavailable }
            }
            identity.sealedTokens = try next?.sealed(with: secret)
            credential.config = try CredentialRecord.encodeConfig(identity)
            credential.updatedAt = now
            try await stores.credentials.update(credential)
            try await stores.audit.append(audit)
            return nil
        }
    }
}
