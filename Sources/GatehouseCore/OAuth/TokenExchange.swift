import Foundation
import GatehouseAPI

/// RFC 8693 token exchange at `/oauth/token`, for confidential clients the operator allowed it
/// (`token_exchange`): a service that received a user's access token trades it for one meant for a
/// downstream service alone, with at most the same scopes (delegation); or an operator's service
/// gets a token that acts as a user, saying so in `act` (impersonation). The new token never
/// includes Gatehouse's own API in its audience, so neither can change the account, and each
/// exchange is audited.
public struct TokenExchange: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    /// Impersonation names the user by id: there is no token of theirs to present (RFC 8693 §3 lets
    /// a server define its own token type URIs).
    public static let userIDType = "urn:gatehouse:params:oauth:token-type:user-id"

    public struct Request: Sendable {
        public var subjectToken: String
        public var subjectTokenType: String
        /// `audience` or `resource`: the downstream service, one of the client's `audiences`.
        public var audience: String?
        public var scope: String?
        public var requestedTokenType: String?

        public init(subjectToken: String, subjectTokenType: String, audience: String?, scope: String?, requestedTokenType: String?) {
            self.subjectToken = subjectToken
            self.subjectTokenType = subjectTokenType
            self.audience = audience
            self.scope = scope
            self.requestedTokenType = requestedTokenType
        }
    }

    /// Every refusal to the authenticated client is audited with its error code: an exchange is a
    /// service asking for a user's authority, and one asking for more than it may is worth seeing.
    public func exchange(_ request: Request, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        do {
            return try await exchangeChecked(request, client: client, meta: meta)
        } catch let error as GatehouseError where error.category != .unavailable && error.code != .useDPoPNonce {
            let audience = request.audience.map { " for \($0.prefix(200))" } ?? ""
            try? await services.persistence.transaction { stores in
                try await stores.audit.append(
                    AuditEvent(
                        at: services.clock.now(), type: AuditEvent.tokenExchangeRefused, clientID: client.id, method: "token_exchange",
                        reason: "\(error.code.rawValue)\(audience)", meta: meta))
            }
            throw error
        }
    }

    private func exchangeChecked(_ request: Request, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        guard client.kind == .confidential, client.settings.tokenExchange != .off else {
            throw GatehouseError.unauthorizedClient("This client may not exchange tokens (token_exchange is off).")
        }
        if let requested = request.requestedTokenType, requested != Self.accessTokenType {
            throw GatehouseError.badRequest("requested_token_type must be \(Self.accessTokenType).")
        }
        guard let audience = request.audience, !audience.isEmpty else {
            throw GatehouseError.invalidTarget("Name the service the token is for in audience (one of this client's audiences).")
        }
        guard client.settings.audiences.contains(audience), audience != services.tokens.issuer else {
            throw GatehouseError.invalidTarget("The audience \(audience.prefix(256)) is not one of this client's audiences.")
        }
        switch request.subjectTokenType {
        case Self.accessTokenType: return try await delegate(request, audience: audience, client: client, meta: meta)
        case Self.userIDType: return try await impersonate(request, audience: audience, client: client, meta: meta)
        default:
            throw GatehouseError.badRequest("subject_token_type must be \(Self.accessTokenType) or \(Self.userIDType).")
        }
    }

    /// The user's token, live, for a narrower token: same user and session (ending the session ends
    /// it at introspection), the exchanging client's name, only scopes the user's token had.
    private func delegate(_ request: Request, audience: String, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        guard let claims = try? await services.tokens.verify(request.subjectToken, forThisServer: false), !claims.sid.isEmpty,
            let sessionID = UUID(uuidString: claims.sid)
        else { throw GatehouseError.invalidGrant("The subject_token is not a valid user access token of this server.") }
        let now = services.clock.now()
        guard let session = try await services.persistence.read({ try await $0.sessions.find(id: sessionID) }), session.isLive(at: now),
            let user = try await services.persistence.read({ try await $0.users.find(id: session.userID) }), user.state == .active
        else { throw GatehouseError.invalidGrant("The subject_token's session has ended.") }
        let held = Set(claims.scope.split(separator: " ").map(String.init))
        let scopes = try Self.narrowed(request.scope, held: held, allowed: Set(client.scopes))
        // Never longer than the subject token (which is live, so at least a second is left).
        let ttl = min(services.issuer.accessTTL(client), claims.exp - Int(now.timeIntervalSince1970))
        let dpopKey = try DPoPBinding.key(for: client, meta: meta)
        // A bound token is not turned into a bearer one: the service binds the new token to its own key.
        if claims.cnf != nil, dpopKey == nil {
            throw GatehouseError.invalidDPoPProof(
                "The subject_token is DPoP-bound: send a DPoP proof, and the new token is bound to its key.")
        }
        let token = try await services.tokens.issue(
            subject: services.tokens.subjects.subject(of: session.userID, for: client), sessionID: claims.sid, clientID: client.id,
            scope: scopes.joined(separator: " "), amr: claims.amr, ttl: ttl, resources: [audience],
            authTime: claims.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) },
            algorithm: client.settings.accessTokenSigningAlgorithm,
            dpopKey: dpopKey, includeIssuer: false)
        try await services.persistence.transaction { stores in
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.tokenExchanged, userID: session.userID, clientID: client.id, method: "token_exchange",
                    reason: "for \(audience.prefix(200)) from \(claims.clientID)", meta: meta))
        }
        return Self.answer(token, ttl: ttl, scopes: scopes, bound: dpopKey != nil)
    }

    /// An operator's service acting as a user: `act` names the service, no session stands behind it
    /// (so nothing the user does ends it before `exp`), and the audit log says who did it to whom.
    private func impersonate(_ request: Request, audience: String, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        guard client.settings.tokenExchange == .impersonation else {
            throw GatehouseError.unauthorizedClient("This client may not impersonate users (token_exchange is not impersonation).")
        }
        guard let userID = UUID(uuidString: request.subjectToken),
            let user = try await services.persistence.read({ try await $0.users.find(id: userID) }), user.state == .active
        else { throw GatehouseError.invalidGrant("The subject_token names no active user.") }
        let scopes = try Self.narrowed(request.scope, held: Set(client.scopes), allowed: Set(client.scopes))
        let ttl = min(services.issuer.accessTTL(client), 300)
        let now = services.clock.now()
        let dpopKey = try DPoPBinding.key(for: client, meta: meta)
        let token = try await services.tokens.issue(
            subject: services.tokens.subjects.subject(of: userID, for: client), sessionID: "", clientID: client.id,
            scope: scopes.joined(separator: " "), amr: [], ttl: ttl, resources: [audience],
            algorithm: client.settings.accessTokenSigningAlgorithm,
            dpopKey: dpopKey, actor: client.id, includeIssuer: false)
        try await services.persistence.transaction { stores in
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.admin("user.impersonated"), userID: userID, clientID: client.id, method: "token_exchange",
                    reason: "for \(audience.prefix(200))", actor: "client:\(client.id)", meta: meta))
        }
        return Self.answer(token, ttl: ttl, scopes: scopes, bound: dpopKey != nil)
    }

    /// The scopes asked for, each held by the subject and allowed to the client; all of those when
    /// none are asked for. Asking for more is refused, never silently dropped (RFC 8693 §2.2.2).
    static func narrowed(_ asked: String?, held: Set<String>, allowed: Set<String>) throws -> [String] {
        let offered = held.intersection(allowed).subtracting(["openid", "offline_access"])
        guard let asked, !asked.isEmpty else { return offered.sorted() }
        var scopes: [String] = []
        for scope in asked.split(separator: " ").map(String.init) where !scopes.contains(scope) {
            guard offered.contains(scope) else {
                throw GatehouseError.invalidScope(
                    "The scope \(scope.prefix(64)) is not held by the subject token or allowed to this client.")
            }
            scopes.append(scope)
        }
        return scopes
    }

    static func answer(_ token: String, ttl: Int, scopes: [String], bound: Bool) -> TokenResponse {
        var answer = TokenResponse(
            accessToken: token, tokenType: bound ? "DPoP" : "Bearer", expiresIn: ttl, refreshToken: nil,
            scope: scopes.joined(separator: " "))
        answer.issuedTokenType = accessTokenType
        return answer
    }
}
