import Foundation
import GatehouseAPI

/// RFC 7009 revocation, RFC 7662 introspection and the client-credentials grant.
public struct OAuthFlows: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// Revoking either token of a session ends the session (a JWT cannot be recalled on its own, and
    /// every authenticated route checks the session). Unknown tokens and other clients' tokens are
    /// ignored with success, as RFC 7009 §2.2 asks.
    public func revoke(token: String, client: ClientRecord) async throws {
        let now = services.clock.now()
        var sessionID: UUID?
        if let chain = RefreshChainToken(parsing: token) {
            // Any genuine token of the chain names its session, as any row of a chain did; the current
            // one is also known by its hash (made under a secret since removed from the ring).
            if services.secret.verifies(chain) {
                sessionID = chain.sessionID
            } else if let current = try await services.persistence.read({ try await $0.sessions.find(id: chain.sessionID) })?.refreshChain,
                Secrets.constantTimeEquals(Secrets.sha256Hex(token), current.tokenHash)
            {
                sessionID = chain.sessionID
            }
        } else if token.hasPrefix(RefreshTokenFormat.prefix) {
            let hash = Secrets.sha256Hex(token)
            sessionID = try await services.persistence.read { try await $0.refreshTokens.find(hash: hash)?.sessionID }
        } else if let claims = try? await services.tokens.verify(token), claims.clientID == client.id {
            sessionID = UUID(uuidString: claims.sid)
        }
        guard let sessionID else { return }
        let clientID = client.id
        try await services.persistence.transaction { stores in
            guard let session = try await stores.sessions.find(id: sessionID), session.clientID == clientID else { return }
            _ = try await stores.endSession(sessionID, at: now, reason: .tokenRevoked, notices: services.notices)
        }
    }

    public func introspect(token: String) async throws -> IntrospectionResponse {
        let now = services.clock.now()
        if let chain = RefreshChainToken(parsing: token) {
            // Active is the current token only, known by its hash.
            guard let session = try await services.persistence.read({ try await $0.sessions.find(id: chain.sessionID) }),
                let state = session.refreshChain, state.generation == chain.generation,
                Secrets.constantTimeEquals(Secrets.sha256Hex(token), state.tokenHash)
            else { return IntrospectionResponse(active: false) }
            return try await introspection(
                of: session, issuedAt: state.rotatedAt, expiresAt: min(state.expiresAt, session.expiresAt), now: now)
        }
        if token.hasPrefix(RefreshTokenFormat.prefix) {
            let hash = Secrets.sha256Hex(token)
            let found = try await services.persistence.read { stores -> (RefreshTokenRecord, SessionRecord)? in
                guard let record = try await stores.refreshTokens.find(hash: hash),
                    let session = try await stores.sessions.find(id: record.sessionID)
                else { return nil }
                return (record, session)
            }
            // A row whose session moved onto a chain was its head, exchanged since.
            guard let (record, session) = found, record.rotatedAt == nil, session.refreshChain == nil else {
                return IntrospectionResponse(active: false)
            }
            return try await introspection(of: session, issuedAt: record.createdAt, expiresAt: record.expiresAt, now: now)
        }
        guard let claims = try? await services.tokens.verify(token, forThisServer: false) else {
            return IntrospectionResponse(active: false)
        }
        if !claims.sid.isEmpty {
            guard let sessionID = UUID(uuidString: claims.sid),
                let session = try await services.persistence.read({ try await $0.sessions.find(id: sessionID) }),
                session.isLive(at: now)
            else { return IntrospectionResponse(active: false) }
        }
        var answer = IntrospectionResponse(active: true)
        answer.scope = claims.scope
        answer.clientId = claims.clientID
        answer.sub = claims.sub
        answer.exp = claims.exp
        answer.iat = claims.iat
        answer.iss = claims.iss
        answer.aud = claims.aud
        answer.jti = claims.jti
        answer.sid = claims.sid.isEmpty ? nil : claims.sid
        answer.tokenType = claims.cnf == nil ? "Bearer" : "DPoP"
        answer.cnf = claims.cnf
        answer.act = claims.act
        return answer
    }

    /// A refresh token's answer: active while it is current, unexpired and its session live.
    private func introspection(of session: SessionRecord, issuedAt: Date, expiresAt: Date, now: Date) async throws -> IntrospectionResponse
    {
        guard expiresAt > now, session.isLive(at: now) else { return IntrospectionResponse(active: false) }
        var answer = IntrospectionResponse(active: true)
        answer.scope = session.scopes.joined(separator: " ")
        answer.clientId = session.clientID
        let client = try await services.clients.resolve(session.clientID)
        answer.sub = services.tokens.subjects.subject(of: session.userID, for: client)
        answer.exp = Int(expiresAt.timeIntervalSince1970)
        answer.iat = Int(issuedAt.timeIntervalSince1970)
        answer.iss = services.tokens.issuer
        answer.sid = session.id.uuidString.lowercased()
        answer.tokenType = "refresh_token"
        answer.cnf = session.dpopJKT.map(Confirmation.init(jkt:))
        return answer
    }

    /// A machine token for a confidential client: no user, no session, no refresh token.
    public func clientCredentials(
        client: ClientRecord, scope: String?, resource: String? = nil, meta: RequestMeta = RequestMeta()
    ) async throws -> TokenResponse {
        let resources = try SessionIssuer.resources(requested: resource, client: client, issuer: services.tokens.issuer)
        // RFC 6749 §5.2: a scope the client may not have is refused, never silently dropped. `openid`
        // and `offline_access` need a user, which this grant has none of.
        let userOnly: Set<String> = ["openid", "offline_access"]
        if let scope {
            let asked = scope.split(separator: " ").map(String.init)
            if let refused = asked.first(where: { userOnly.contains($0) || !client.scopes.contains($0) }) {
                throw GatehouseError.invalidScope("The client may not request the scope \(refused) with client_credentials.")
            }
        }
        let scopes = SessionIssuer.grant(requested: scope, client: client).filter { !userOnly.contains($0) }
        let ttl = services.issuer.accessTTL(client)
        let dpopKey = try DPoPBinding.key(for: client, meta: meta)
        let access = try await services.tokens.issue(
            subject: client.id, sessionID: "", clientID: client.id, scope: scopes.joined(separator: " "), amr: [],
            ttl: ttl, resources: resources, algorithm: client.settings.accessTokenSigningAlgorithm, dpopKey: dpopKey)
        return TokenResponse(
            accessToken: access, tokenType: dpopKey == nil ? "Bearer" : "DPoP", expiresIn: ttl, refreshToken: nil,
            scope: scopes.joined(separator: " "))
    }
}
