import Foundation
import GatehouseAPI

/// Starts sessions and mints the tokens of a token response. Shared by every flow that signs a user in.
public struct SessionIssuer: Sendable {
    let persistence: any Persistence
    let tokens: AccessTokens
    let clock: any WallClock
    let settings: CoreSettings
    let hooks: FlowHooks
    let secret: ServerSecret
    let chains: RefreshChainGate

    public init(
        persistence: any Persistence, tokens: AccessTokens, clock: any WallClock, settings: CoreSettings, secret: ServerSecret,
        chains: RefreshChainGate, hooks: FlowHooks = FlowHooks()
    ) {
        self.secret = secret
        self.chains = chains
        self.persistence = persistence
        self.tokens = tokens
        self.clock = clock
        self.settings = settings
        self.hooks = hooks
    }

    public struct Started: Sendable {
        public var session: SessionRecord
        public var refreshToken: String
    }

    /// Writes a session and its first refresh token, in the caller's transaction. Only
    /// ``SessionStarter`` calls it: every session passes the assurance gate first.
    /// `id`: a session id derived from the authorization code that starts it, so a replayed code can
    /// end it (RFC 6749 §4.1.2); `browserSessionID` and `authTime` for a hosted sign-in.
    func start(
        userID: UUID, client: ClientRecord, amr: [String], scopes: [String], meta: RequestMeta, stores: any Stores,
        credentialID: String? = nil, id: UUID = UUID(), browserSessionID: UUID? = nil, authTime: Date? = nil,
        claims: RequestedClaims? = nil
    ) async throws -> Started {
        let now = clock.now()
        var session = SessionRecord(
            id: id, userID: userID, clientID: client.id, amr: amr, scopes: scopes, userAgent: meta.userAgent,
            ipAddress: meta.ipAddress, createdAt: now, expiresAt: now.addingTimeInterval(settings.sessionLifetime),
            credentialID: credentialID, browserSessionID: browserSessionID, authTime: authTime)
        session.requestedClaims = claims
        // The first access token is bound to the proof's key either way; only a public client's refresh
        // tokens are (RFC 9449 §5: a confidential client's are bound by its secret).
        session.dpopJKT = try DPoPBinding.key(for: client, meta: meta)
        var stored = session
        if client.kind != .public { stored.dpopJKT = nil }
        guard chains.isOpen else {
            try await stores.sessions.insert(stored)
            let refreshToken = Secrets.token(prefix: RefreshTokenFormat.prefix)
            try await stores.refreshTokens.insert(
                RefreshTokenRecord(
                    tokenHash: Secrets.sha256Hex(refreshToken), sessionID: session.id, parentHash: nil, createdAt: now,
                    expiresAt: refreshExpiry(session: session, client: client, now: now)))
            return Started(session: session, refreshToken: refreshToken)
        }
        let refreshToken = secret.refreshChainToken(.first(of: session.id))
        let chain = RefreshChainState(
            generation: 0, rotatedAt: now, expiresAt: refreshExpiry(session: session, client: client, now: now),
            tokenHash: Secrets.sha256Hex(refreshToken))
        stored.refreshChain = chain
        session.refreshChain = chain
        try await stores.sessions.insert(stored)
        return Started(session: session, refreshToken: refreshToken)
    }

    /// Refresh tokens idle out after the client's `refresh_token_ttl`, never later than the session.
    func refreshExpiry(session: SessionRecord, client: ClientRecord, now: Date) -> Date {
        min(now.addingTimeInterval(TimeInterval(client.settings.refreshTokenTTL)), session.expiresAt)
    }

    func accessTTL(_ client: ClientRecord) -> Int {
        min(max(client.settings.accessTokenTTL, 30), settings.maxAccessTokenTTL)
    }

    /// The resource servers an access token is for besides the issuer: the one the request named
    /// (RFC 8707 `resource`), which must be among the client's `audiences`, else all of them.
    public static func resources(requested: String?, client: ClientRecord, issuer: String) throws -> [String] {
        guard let requested, !requested.isEmpty else { return client.settings.audiences }
        if requested == issuer { return [] }
        guard client.settings.audiences.contains(requested) else {
            throw GatehouseError.invalidTarget("The resource \(requested.prefix(256)) is not one of this client's audiences.")
        }
        return [requested]
    }

    /// The token response for a session (access token signed now), bound to the session's DPoP key
    /// when it has one (a refresh sets the key its own proof holds for a confidential client).
    public func response(
        session: SessionRecord, refreshToken: String?, client: ClientRecord, user: UserRecord?, isNew: Bool?,
        nonce: String? = nil, resources: [String]? = nil, acr: String? = nil
    ) async throws -> TokenResponse {
        let ttl = accessTTL(client)
        let scope = session.scopes.joined(separator: " ")
        // Every issue asks, refreshes too, so claims follow the operator's data as it changes.
        let claims =
            hooks.hasBeforeHooks
            ? try await hooks.before(
                HookEvent(
                    point: .tokenIssue, clientID: client.id, method: session.amr.first, identifier: user?.email, userID: session.userID,
                    scopes: session.scopes, meta: RequestMeta(userAgent: session.userAgent))
            ).claims : [:]
        let subject = tokens.subjects.subject(of: session.userID, for: client)
        let access = try await tokens.issue(
            subject: subject, sessionID: session.id.uuidString.lowercased(),
            clientID: client.id, scope: scope, amr: session.amr, ttl: ttl, resources: resources ?? client.settings.audiences,
            authTime: session.authTime ?? session.createdAt, extraClaims: claims, algorithm: client.settings.accessTokenSigningAlgorithm,
            dpopKey: session.dpopJKT)
        var idToken: String?
        if session.scopes.contains("openid") {
            idToken = try await tokens.issueIDToken(
                subject: subject, clientID: client.id,
                sessionID: session.id.uuidString.lowercased(), authTime: session.authTime ?? session.createdAt, nonce: nonce,
                amr: session.amr, acr: acr, accessToken: access,
                user: UserClaims(user: user, scopes: session.scopes, requested: session.requestedClaims?.idToken ?? []), ttl: ttl,
                algorithm: client.settings.idTokenSigningAlgorithm)
        }
        var shown: User?
        if let user { shown = try await annotated(user, client: client) }
        return TokenResponse(
            accessToken: access, tokenType: session.dpopJKT == nil ? "Bearer" : "DPoP", expiresIn: ttl, refreshToken: refreshToken,
            scope: scope, idToken: idToken,
            user: shown, isNew: isNew)
    }

    /// The user with what the app must still ask for, so it learns it without two more calls.
    func annotated(_ user: UserRecord, client: ClientRecord) async throws -> User {
        let agreement = try await persistence.read {
            try await $0.agreements.find(userID: user.id, clientID: client.id)
        }
        var wire = user.wire
        wire.agreementsUpToDate = AgreementRecord.isUpToDate(agreement, settings: client.settings)
        wire.missingRequiredFields = RequiredFieldsPolicy.missing(user: user, client: client)
        return wire
    }

    /// The granted scopes: what was asked for and the client allows; `openid` only when asked for,
    /// since it adds an ID token.
    public static func grant(requested: String?, client: ClientRecord) -> [String] {
        guard let requested, !requested.isEmpty else { return client.scopes.filter { $0 != "openid" } }
        var granted: [String] = []
        for scope in requested.split(separator: " ").map(String.init) where client.scopes.contains(scope) {
            if !granted.contains(scope) { granted.append(scope) }
        }
        return granted
    }
}
