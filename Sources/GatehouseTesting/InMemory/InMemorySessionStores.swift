import Foundation
import GatehouseAPI
import GatehouseCore

// Sessions, refresh chains, browser sessions and persisted flows in memory.

struct InMemorySessionStore: SessionStore {
    let box: StateBox

    func insert(_ session: SessionRecord) async throws { box.with { $0.sessions[session.id] = session } }
    func find(id: UUID) async throws -> SessionRecord? { box.with { $0.sessions[id] } }

    func listLive(userID: UUID, now: Date) async throws -> [SessionRecord] {
        box.with { state in
            state.sessions.values.filter { $0.userID == userID && $0.isLive(at: now) }.sorted { $0.createdAt > $1.createdAt }
        }
    }

    func findWithUser(id: UUID) async throws -> (session: SessionRecord, user: UserRecord)? {
        box.with { state in
            guard let session = state.sessions[id], let user = state.users[session.userID] else { return nil }
            return (session, state.withPasswordFlag(user))
        }
    }

    func findForRefresh(id: UUID) async throws -> (session: SessionRecord, userActive: Bool)? {
        box.with { state in
            guard let session = state.sessions[id] else { return nil }
            return (session, state.users[session.userID]?.state == .active)
        }
    }

    func advanceRefreshChain(_ claim: RefreshChainClaim) async throws -> SessionRecord? {
        box.with { state in
            guard let session = state.sessions[claim.sessionID], session.clientID == claim.clientID,
                session.isLive(at: claim.now), state.users[session.userID]?.state == .active
            else { return nil }
            if let from = claim.from {
                guard let chain = session.refreshChain, chain.generation == from.generation, chain.tokenHash == from.tokenHash,
                    chain.expiresAt > claim.now
                else { return nil }
            } else if session.refreshChain != nil {
                return nil
            }
            if let dpop = claim.dpop, let bound = session.dpopJKT, bound != dpop.match { return nil }
            var next = session
            next.refreshChain = RefreshChainState(
                generation: claim.next, rotatedAt: claim.now, expiresAt: claim.expiresAt, tokenHash: claim.nextHash)
            next.lastUsedAt = claim.now
            if next.dpopJKT == nil, let bind = claim.dpop?.bind { next.dpopJKT = bind }
            state.sessions[claim.sessionID] = next
            return next
        }
    }

    func bindDPoP(id: UUID, jkt: String) async throws -> Bool {
        box.with { state in
            guard let session = state.sessions[id], session.dpopJKT == nil || session.dpopJKT == jkt else { return false }
            state.sessions[id]!.dpopJKT = jkt
            return true
        }
    }

    func revoke(id: UUID, at: Date, reason: RevokeReason) async throws -> Bool {
        box.with { state in
            guard let session = state.sessions[id], session.revokedAt == nil else { return false }
            state.sessions[id]!.revokedAt = at
            state.sessions[id]!.revokeReason = reason.rawValue
            return true
        }
    }

    func revokeAll(clientID: String, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.clientID == clientID }
    }

    func revokeAll(credentialID: String, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.credentialID == credentialID }
    }

    func revokeAll(browserSessionID: UUID, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.browserSessionID == browserSessionID }
    }

    func revokeAll(userID: UUID, clientID: String, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.userID == userID && $0.clientID == clientID }
    }

    func revokeAll(userID: UUID, except: UUID?, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.userID == userID && $0.id != except }
    }

    func replaceAnonymousAMR(userID: UUID, with amr: [String]) async throws {
        box.with { state in
            for (id, session) in state.sessions where session.userID == userID && session.amr == [AuthenticationMethod.anonymous] {
                state.sessions[id]!.amr = amr
            }
        }
    }

    private func revokeWhere(at: Date, reason: RevokeReason, _ match: (SessionRecord) -> Bool) -> Int {
        box.with { state in
            let ids = state.sessions.values.filter { $0.revokedAt == nil && match($0) }.map(\.id)
            for id in ids {
                state.sessions[id]!.revokedAt = at
                state.sessions[id]!.revokeReason = reason.rawValue
            }
            return ids.count
        }
    }
}

struct InMemoryRefreshTokenStore: RefreshTokenStore {
    let box: StateBox

    func insert(_ token: RefreshTokenRecord) async throws { box.with { $0.refreshTokens[token.tokenHash] = token } }

    func find(hash: String) async throws -> RefreshTokenRecord? { box.with { Self.withRotation(hash, in: $0) } }

    func findWithSession(hash: String) async throws -> (token: RefreshTokenRecord, session: SessionRecord, userActive: Bool)? {
        box.with { state in
            guard let token = Self.withRotation(hash, in: state), let session = state.sessions[token.sessionID] else { return nil }
            return (token, session, state.users[session.userID]?.state == .active)
        }
    }

    func insertSuccessor(_ successor: RefreshTokenRecord) async throws -> Bool {
        box.with { state in
            guard let parent = successor.parentHash,
                !state.refreshTokens.values.contains(where: { $0.parentHash == parent })
            else { return false }
            state.refreshTokens[successor.tokenHash] = successor
            return true
        }
    }

    /// A token's rotation time is its successor's creation, as in SQL.
    private static func withRotation(_ hash: String, in state: InMemoryState) -> RefreshTokenRecord? {
        guard var token = state.refreshTokens[hash] else { return nil }
        token.rotatedAt = state.refreshTokens.values.first { $0.parentHash == hash }?.createdAt
        return token
    }
}

struct InMemoryFlowStore: FlowStore {
    let box: StateBox

    func insert(_ flow: FlowRecord) async throws { box.with { $0.flows[flow.id] = flow } }
    func find(id: UUID) async throws -> FlowRecord? { box.with { $0.flows[id] } }

    func advance(id: UUID, from step: FlowStep, to next: FlowStep, userID: UUID?, data: String?, at: Date) async throws -> Bool {
        try box.with { state in
            // The SQL schema's foreign key: a flow can only name a user that exists.
            if let userID, state.users[userID] == nil { throw InMemoryStoreError.unknownUser(userID) }
            guard let flow = state.flows[id], flow.step == step, flow.isOpen(at: at) else { return false }
            state.flows[id]!.step = next
            if let userID { state.flows[id]!.userID = userID }
            if let data { state.flows[id]!.data = data }
            state.flows[id]!.updatedAt = at
            return true
        }
    }

    func consume(id: UUID, at: Date) async throws -> FlowRecord? {
        box.with { state in
            guard let flow = state.flows[id], flow.isOpen(at: at) else { return nil }
            state.flows[id]!.consumedAt = at
            state.flows[id]!.updatedAt = at
            return state.flows[id]
        }
    }
}

struct InMemoryBrowserSessionStore: BrowserSessionStore {
    let box: StateBox

    func insert(_ session: BrowserSessionRecord) async throws { box.with { $0.browserSessions[session.id] = session } }
    func find(tokenHash: String) async throws -> BrowserSessionRecord? {
        box.with { $0.browserSessions.values.first { $0.tokenHash == tokenHash } }
    }
    func touch(id: UUID, at: Date) async throws { box.with { $0.browserSessions[id]?.lastSeenAt = at } }

    func reauthenticated(id: UUID, amr: [String], at: Date) async throws -> Bool {
        box.with { state in
            guard state.browserSessions[id]?.revokedAt == nil, state.browserSessions[id] != nil else { return false }
            state.browserSessions[id]!.amr = amr
            state.browserSessions[id]!.authTime = at
            state.browserSessions[id]!.lastSeenAt = at
            return true
        }
    }

    func revoke(id: UUID, at: Date) async throws -> Bool {
        box.with { state in
            guard state.browserSessions[id] != nil, state.browserSessions[id]!.revokedAt == nil else { return false }
            state.browserSessions[id]!.revokedAt = at
            return true
        }
    }

    func revokeAll(userID: UUID, at: Date) async throws -> Int {
        box.with { state in
            let ids = state.browserSessions.values.filter { $0.userID == userID && $0.revokedAt == nil }.map(\.id)
            for id in ids { state.browserSessions[id]!.revokedAt = at }
            return ids.count
        }
    }
}
