import Foundation
import GatehouseAPI
import Logging

/// The provider's access token for one of the signed-in user's identities, for the app to call the
/// provider's API as the person (the Backbeam seed's "social token"). Kept only where the operator
/// opted in (``SocialProvider/keepTokens``), handed only over the app's own session (checked against
/// its row on every request) to a client that offers the provider, and refreshed at the provider when
/// it has expired; the refresh token never leaves the server.
public struct ProviderTokensFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func accessToken(_ principal: Principal, identityID: String, meta: RequestMeta) async throws -> ProviderAccessToken {
        let now = services.clock.now()
        let (credential, identity) = try await stored(identityID, userID: principal.user.id)
        let client = try await services.clients.resolve(principal.session.clientID)
        guard let provider = services.social.providers[identity.provider], provider.keepTokens,
            client.settings.socialProviders.contains(provider.id),
            let sealed = identity.sealedTokens, var grant = try? ProviderGrant.opened(sealed, with: services.secret)
        else { throw GatehouseError.providerTokenUnavailable }
        if !grant.isFresh(at: now) {
            // Audited when the provider is asked (a read is a read path, as `/v1/me`, and is not).
            let event = { (type: String) in
                AuditEvent(at: now, type: type, userID: principal.user.id, clientID: client.id, method: "social:" + provider.id, meta: meta)
            }
            grant = try await refreshed(grant, sealed: sealed, credential: credential, provider: provider, now: now, event: event)
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

    /// A new access token from the provider for the kept refresh token, stored in place of the one
    /// read if no other request replaced it meanwhile (then that one's tokens stand: a provider that
    /// rotates refresh tokens has spent ours). An identity unlinked meanwhile gets nothing.
    private func refreshed(
        _ grant: ProviderGrant, sealed: String, credential: CredentialRecord, provider: SocialProvider, now: Date,
        event: (String) -> AuditEvent
    ) async throws -> ProviderGrant {
        guard let refreshToken = grant.refreshToken, let http = services.social.http else { throw GatehouseError.providerTokenUnavailable }
        let tokens: ProviderAPI.Tokens
        do {
            let endpoints = try await services.social.verifier?.cache.endpoints(provider) ?? provider.endpoints
            guard let tokenURL = endpoints.token else { throw IDTokenError.providerMisconfigured }
            tokens = try await ProviderAPI(http: http).refresh(refreshToken, provider: provider, tokenURL: tokenURL, now: now)
        } catch IDTokenError.codeRefused {
            // Revoked by the person, expired, or spent by another node's refresh a moment ago.
            if let theirs = try await replace(sealed, in: credential.id, with: nil, audit: event("identity.token_refresh_refused")) {
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
        guard let next = ProviderGrant(tokens, now: now, previousRefreshToken: refreshToken) else {
            throw GatehouseError.providerRefreshUnavailable
        }
        return try await replace(sealed, in: credential.id, with: next, audit: event("identity.token_refreshed")) ?? next
    }

    /// Replaces the sealed tokens `sealed` of the identity with `next` (nil: removes them) and records
    /// `audit`. When another request replaced them first, answers its usable tokens instead and writes
    /// nothing.
    private func replace(
        _ sealed: String, in credentialID: String, with next: ProviderGrant?, audit: AuditEvent
    ) async throws -> ProviderGrant? {
        let secret = services.secret
        let now = services.clock.now()
        return try await services.persistence.transaction { stores -> ProviderGrant? in
            guard var credential = try await stores.credentials.find(id: credentialID),
                var identity = try? credential.decodeConfig(FederatedIdentity.self)
            else { throw GatehouseError.notFound("No such identity.") }
            guard identity.sealedTokens == sealed else {
                let theirs = identity.sealedTokens.flatMap { try? ProviderGrant.opened($0, with: secret) }
                guard let theirs, theirs.isFresh(at: now) else { throw GatehouseError.providerTokenUnavailable }
                return theirs
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
