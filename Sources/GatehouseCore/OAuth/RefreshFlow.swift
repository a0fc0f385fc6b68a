import Foundation
import GatehouseAPI
import Logging

/// `grant_type=refresh_token`: rotation on every use, a short grace for retries, theft detection after it.
/// Sessions on a chain (`RefreshFlow+Chain.swift`) refresh in one statement; sessions started with
/// token rows by an older release refresh there (`RefreshFlow+Rows.swift`) and move onto a chain.
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
    func dpopKeys(
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
        let (rotated, successor): (SessionRecord, String)
        if let chain = RefreshChainToken(parsing: token) {
            (rotated, successor) = try await refresh(chain: chain, presented: token, client: client, meta: meta)
        } else {
            (rotated, successor) = try await refresh(rowToken: token, client: client, meta: meta)
        }
        var session = rotated
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

    /// A token presented after its successor's grace interval: whoever holds the chain now may be a
    /// thief, so the session ends for both.
    func endForReuse(_ session: SessionRecord, client: ClientRecord, meta: RequestMeta, now: Date, stores: any Stores) async throws {
        _ = try await stores.endSession(session.id, at: now, reason: .refreshTokenReuse, notices: services.notices)
        try await stores.audit.append(
            AuditEvent(
                at: now, type: AuditEvent.refreshTokenReused, userID: session.userID, clientID: client.id, method: "refresh_token",
                reason: "session_revoked", meta: meta))
    }

    func reuseDetected(client: ClientRecord) -> GatehouseError {
        services.logger.warning("refresh token reuse detected; session revoked", metadata: ["client_id": "\(client.id)"])
        return GatehouseError.invalidGrant("The refresh token was already used; the session has been revoked.")
    }
}
