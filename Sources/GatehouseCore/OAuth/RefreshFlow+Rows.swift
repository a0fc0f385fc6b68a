import Foundation
import GatehouseAPI

extension RefreshFlow {
    /// A refresh token stored as a row (issued by a release before schema 18, or while a node of one
    /// was alive). Once every node runs chains (`RefreshChainGate`), the chain's head row moves the
    /// session onto a chain: its successor is chain token 1, and no row is written any more.
    func refresh(rowToken token: String, client: ClientRecord, meta: RequestMeta) async throws -> (SessionRecord, String) {
        let hash = Secrets.sha256Hex(token)
        let now = services.clock.now()
        let grace = services.settings.refreshReuseGrace
        let secret = services.secret
        let chainsOpen = services.refreshChains.isOpen

        // Validity is read on a reader, off the single writer; the writer transaction then does only the
        // atomic claim and the writes. A revocation that commits between the two is ordered after this
        // refresh: the new tokens die with the session, as every use checks that it is live.
        guard
            let (record, session, userActive) = try await services.persistence.read({
                try await $0.refreshTokens.findWithSession(hash: hash)
            })
        else { throw GatehouseError.invalidGrant("The refresh token is not valid.") }
        guard session.isLive(at: now) else { throw GatehouseError.invalidGrant("The session has ended.") }
        guard session.clientID == client.id else { throw GatehouseError.invalidGrant("The refresh token belongs to another client.") }
        guard userActive else { throw GatehouseError.invalidGrant("The account is disabled.") }
        guard record.expiresAt > now else { throw GatehouseError.invalidGrant("The refresh token has expired.") }
        let successorExpiry = issuer.refreshExpiry(session: session, client: client, now: now)
        let (dpopKey, bindTo) = try await dpopKeys(session: session, client: client, meta: meta, now: now)

        // Not counted per address (`token` limit): refresh tokens are single-use 256-bit secrets, and on
        // SQLite the counter's extra statement cost 15 % of refresh throughput (threat model A2).
        let outcome: Outcome = try await services.persistence.transaction { stores in
            // First use with a proof binds the session; a parallel refresh by the same key binds it too.
            if let bindTo, try await !stores.sessions.bindDPoP(id: session.id, jkt: bindTo) {
                throw GatehouseError.invalidGrant("The refresh token is bound to another DPoP key.")
            }
            if chainsOpen, record.rotatedAt == nil {
                let first = secret.refreshChainToken(secret.chainToken(movingRowToken: token, session: session.id))
                let claim = RefreshChainClaim(
                    sessionID: session.id, from: nil, nextHash: Secrets.sha256Hex(first), clientID: client.id, now: now,
                    expiresAt: successorExpiry, dpop: nil)
                if let moved = try await stores.sessions.advanceRefreshChain(claim) { return .rotated(moved, successor: first) }
                // The head row was exchanged for chain token 1 already: a retry inside the grace gets that
                // token again; later, the row is a reused token.
                if let chain = try await stores.sessions.find(id: session.id)?.refreshChain, chain.generation == 1,
                    now.timeIntervalSince(chain.rotatedAt) <= grace
                {
                    return .rotated(session, successor: first)
                }
                try await endForReuse(session, client: client, meta: meta, now: now, stores: stores)
                return .reuseDetected
            }
            let successor = secret.refreshSuccessor(of: token)
            let record = RefreshTokenRecord(
                tokenHash: Secrets.sha256Hex(successor), sessionID: session.id, parentHash: hash, createdAt: now,
                expiresAt: successorExpiry)
            if try await stores.refreshTokens.insertSuccessor(record) {
                return .rotated(session, successor: successor)
            }
            // Someone rotated it before us. Re-read: under PostgreSQL's READ COMMITTED the insert waited for
            // that transaction, so its successor (the rotation time) is visible now.
            let rotatedAt = try await stores.refreshTokens.find(hash: hash)?.rotatedAt ?? now
            if now.timeIntervalSince(rotatedAt) <= grace {
                return .rotated(session, successor: secret.refreshSuccessor(of: token))
            }
            try await endForReuse(session, client: client, meta: meta, now: now, stores: stores)
            return .reuseDetected
        }
        switch outcome {
        case .reuseDetected: throw reuseDetected(client: client)
        case .rotated(var session, let successor):
            session.dpopJKT = dpopKey
            return (session, successor)
        }
    }
}
