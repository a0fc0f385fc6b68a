import Foundation
import GatehouseAPI

extension RefreshFlow {
    /// A chain token. The common case is one statement, the claim, which checks everything a refresh
    /// must (the session live and the client's, the user active, the token the current one by its
    /// hash and unexpired, the DPoP key) and moves the chain on. Only a refused claim of a token with a
    /// valid MAC reads, to say why: a retry inside the grace interval, a reused token, or the reason it
    /// is not valid. A forged token costs one update that matches nothing, and ends nothing.
    func refresh(
        chain token: RefreshChainToken, presented: String, client: ClientRecord, meta: RequestMeta
    ) async throws -> (SessionRecord, String) {
        let now = services.clock.now()
        let hash = Secrets.sha256Hex(presented)
        let secret = services.secret
        // A public client without a proof when proofs are required is refused either way; the read path
        // says how (and audits a bound session's missing proof).
        if client.kind != .public || meta.dpopKey != nil || client.settings.dpop != .required {
            let accessKey = try DPoPBinding.key(for: client, meta: meta)
            let successor = secret.refreshChainToken(token.successor)
            let claim = RefreshChainClaim(
                sessionID: token.sessionID, from: (token.generation, hash), nextHash: Secrets.sha256Hex(successor),
                clientID: client.id, now: now,
                expiresAt: now.addingTimeInterval(TimeInterval(client.settings.refreshTokenTTL)),
                dpop: client.kind == .public
                    ? RefreshChainClaim.DPoP(match: meta.dpopKey, bind: client.settings.dpop == .off ? nil : meta.dpopKey) : nil)
            if var session = try await services.persistence.write({ try await $0.sessions.advanceRefreshChain(claim) }) {
                // A public client's session holds the key its refresh tokens are bound to; the access
                // token is bound to it too.
                session.dpopJKT = client.kind == .public ? (session.dpopJKT ?? accessKey) : accessKey
                return (session, successor)
            }
        }
        // Only a token this server made may end a session as reused. (The current token made under a
        // secret since removed from the ring still refreshes by its hash, above.)
        guard secret.verifies(token) else { throw GatehouseError.invalidGrant("The refresh token is not valid.") }
        return try await refusedClaim(token, hash: hash, client: client, meta: meta, now: now)
    }

    /// Why the claim was refused, read now. A retry of the refresh that made the current token gets
    /// that token again; an older token ends the session.
    private func refusedClaim(
        _ token: RefreshChainToken, hash: String, client: ClientRecord, meta: RequestMeta, now: Date
    ) async throws -> (SessionRecord, String) {
        let secret = services.secret
        guard let (session, userActive) = try await services.persistence.read({ try await $0.sessions.findForRefresh(id: token.sessionID) })
        else { throw GatehouseError.invalidGrant("The refresh token is not valid.") }
        guard session.isLive(at: now) else { throw GatehouseError.invalidGrant("The session has ended.") }
        guard session.clientID == client.id else { throw GatehouseError.invalidGrant("The refresh token belongs to another client.") }
        guard userActive else { throw GatehouseError.invalidGrant("The account is disabled.") }
        // A generation the session never reached (a database restored from an older backup) is not valid.
        guard let chain = session.refreshChain, token.generation <= chain.generation else {
            throw GatehouseError.invalidGrant("The refresh token is not valid.")
        }
        if token.generation == chain.generation {
            // A genuine token of this generation that is not the stored one (made with the secret alone,
            // without this chain's seed).
            guard Secrets.constantTimeEquals(hash, chain.tokenHash) else {
                throw GatehouseError.invalidGrant("The refresh token is not valid.")
            }
            guard chain.expiresAt > now else { throw GatehouseError.invalidGrant("The refresh token has expired.") }
            // The current token: the claim failed on its DPoP key, which this checks (and audits).
            let (accessKey, bind) = try await dpopKeys(session: session, client: client, meta: meta, now: now)
            let successor = secret.refreshChainToken(token.successor)
            let claim = RefreshChainClaim(
                sessionID: session.id, from: (token.generation, hash), nextHash: Secrets.sha256Hex(successor),
                clientID: client.id, now: now,
                expiresAt: now.addingTimeInterval(TimeInterval(client.settings.refreshTokenTTL)),
                dpop: client.kind == .public ? RefreshChainClaim.DPoP(match: meta.dpopKey, bind: bind) : nil)
            guard var moved = try await services.persistence.write({ try await $0.sessions.advanceRefreshChain(claim) }) else {
                throw GatehouseError.invalidGrant("The refresh token is not valid.")
            }
            moved.dpopJKT = accessKey
            return (moved, successor)
        }
        if token.generation == chain.generation - 1, now.timeIntervalSince(chain.rotatedAt) <= services.settings.refreshReuseGrace {
            // The token the first refresh issued, recognised by its stored hash.
            guard let current = secret.refreshChainToken(token.successor, hashing: chain.tokenHash) else {
                throw GatehouseError.invalidGrant("The refresh token is not valid.")
            }
            var again = session
            again.dpopJKT = try await dpopKeys(session: session, client: client, meta: meta, now: now).access
            return (again, current)
        }
        try await services.persistence.transaction { stores in
            try await endForReuse(session, client: client, meta: meta, now: now, stores: stores)
        }
        throw reuseDetected(client: client)
    }
}
