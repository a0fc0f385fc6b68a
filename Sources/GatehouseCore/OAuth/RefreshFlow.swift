import Foundation
import GatehouseAPI
import Logging

/// `grant_type=refresh_token`: rotation on every use, a short grace for retries, theft detection after it.
public struct RefreshFlow: Sendable {
    let services: CoreServices
    let issuer: SessionIssuer

    public init(services: CoreServices) {
        self.services = services
        self.issuer = services.issuer
    }

    enum Outcome: Sendable {
        case rotated(SessionRecord, successor: String)
        case reuseDetected
    }

    /// The DPoP key the new access token is bound to, and the key to bind the session to now. A public
    /// client's session is bound to the key of its first proof (RFC 9449 §5), and from then on refreshes
    /// only with a proof by that key, whatever the client's setting says later; a refusal is audited,
    /// as a refresh token off its device is a stolen one. A confidential client's refresh token is
    /// bound by its secret: its access token takes this request's key, if it sent one.
    private func dpopKeys(
        session: SessionRecord, client: ClientRecord, meta: RequestMeta, now: Date
    ) async throws -> (access: String?, bind: String?) {
        let presented = client.settings.dpop == .off ? nil : meta.dpopKey
        guard client.kind == .public else { return (try DPoPBinding.key(for: client, meta: meta), nil) }
        guard let bound = session.dpopJKT else { return (try DPoPBinding.key(for: client, meta: meta), presented) }
        if meta.dpopKey == bound { return (bound, nil) }
        try await services.persistence.transaction { stores in
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.refreshTokenKeyMismatch, userID: session.userID, clientID: client.id,
                    method: "refresh_token", reason: meta.dpopKey == nil ? "no_proof" : "other_key", meta: meta))
        }
        services.logger.warning("DPoP-bound refresh token presented without its key", metadata: ["client_id": "\(client.id)"])
        if meta.dpopKey == nil {
            throw GatehouseError.invalidDPoPProof("This refresh token is bound to a DPoP key: send a proof by that key.")
        }
        throw GatehouseError.invalidGrant("The refresh token is bound to another DPoP key.")
    }

    /// `client` is the authenticated (or, for public clients, named) client; the token must be its own.
    public func refresh(
        token: String, client: ClientRecord, scope: String?, resource: String? = nil, meta: RequestMeta = RequestMeta()
    ) async throws -> TokenResponse {
        guard token.hasPrefix(RefreshTokenFormat.prefix), token.utf8.count <= 256 else {
            throw GatehouseError.invalidGrant("The refresh token is not valid.")
        }
        let resources = try SessionIssuer.resources(requested: resource, client: client, issuer: services.tokens.issuer)
        let hash = Secrets.sha256Hex(token)
        let now = services.clock.now()
        let grace = services.settings.refreshReuseGrace
        let secret = services.secret
        let notices = services.notices

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
            _ = try await stores.endSession(session.id, at: now, reason: .refreshTokenReuse, notices: notices)
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.refreshTokenReused, userID: session.userID, clientID: client.id, method: "refresh_token",
                    reason: "session_revoked", meta: meta))
            return .reuseDetected
        }

        switch outcome {
        case .reuseDetected:
            services.logger.warning("refresh token reuse detected; session revoked", metadata: ["client_id": "\(client.id)"])
            throw GatehouseError.invalidGrant("The refresh token was already used; the session has been revoked.")
        case .rotated(var session, let successor):
            session.dpopJKT = dpopKey
            if let scope, !scope.isEmpty {
                // A refresh may narrow the scope (RFC 6749 §6), never widen it.
                let asked = Set(scope.split(separator: " ").map(String.init))
                guard asked.isSubset(of: Set(session.scopes)) else {
                    throw GatehouseError.invalidScope("The requested scope exceeds the original grant.")
                }
                session.scopes = session.scopes.filter(asked.contains)
            }
            return try await issuer.response(
                session: session, refreshToken: successor, client: client, user: nil, isNew: nil, resources: resources)
        }
    }
}
