import Foundation
import GatehouseCore

/// The stores over one ``StateBox``.
struct InMemoryStores: Stores {
    let box: StateBox

    var users: any UserStore { InMemoryUserStore(box: box) }
    var credentials: any CredentialStore { InMemoryCredentialStore(box: box) }
    var clients: any ClientStore { InMemoryClientStore(box: box) }
    var sessions: any SessionStore { InMemorySessionStore(box: box) }
    var refreshTokens: any RefreshTokenStore { InMemoryRefreshTokenStore(box: box) }
    var signingKeys: any SigningKeyStore { InMemorySigningKeyStore(box: box) }
    var attempts: any AttemptStore { InMemoryAttemptStore(box: box) }
    var codes: any OneTimeCodeStore { InMemoryOneTimeCodeStore(box: box) }
    var outbox: any OutboxStore { InMemoryOutboxStore(box: box) }
    var agreements: any AgreementStore { InMemoryAgreementStore(box: box) }
    var flows: any FlowStore { InMemoryFlowStore(box: box) }
    var browserSessions: any BrowserSessionStore { InMemoryBrowserSessionStore(box: box) }
}

struct InMemoryUserStore: UserStore {
    let box: StateBox

    func insert(_ user: UserRecord) async throws {
        try box.with { state in
            let taken = state.users.values.contains {
                $0.id == user.id || (user.email != nil && $0.email == user.email) || (user.phone != nil && $0.phone == user.phone)
            }
            if taken { throw StoreError.conflict("user") }
            var stored = user
            stored.hasPassword = false
            state.users[user.id] = stored
        }
    }

    func find(id: UUID) async throws -> UserRecord? { box.with { s in s.users[id].map(s.withPasswordFlag) } }
    func find(email: String) async throws -> UserRecord? {
        box.with { s in s.users.values.first { $0.email == email }.map(s.withPasswordFlag) }
    }
    func find(phone: String) async throws -> UserRecord? {
        box.with { s in s.users.values.first { $0.phone == phone }.map(s.withPasswordFlag) }
    }

    func update(_ user: UserRecord) async throws {
        box.with { state in
            guard state.users[user.id] != nil else { return }
            state.users[user.id] = user
        }
    }

    func recordLogin(id: UUID, at: Date) async throws { box.with { $0.users[id]?.lastLoginAt = at } }
    func count() async throws -> Int { box.with { $0.users.count } }
}

struct InMemoryCredentialStore: CredentialStore {
    let box: StateBox

    func insert(_ credential: CredentialRecord) async throws {
        try box.with { state in
            try Self.claim(credential, in: &state)
            state.credentials[credential.id] = credential
        }
    }

    func update(_ credential: CredentialRecord) async throws {
        try box.with { state in
            guard var stored = state.credentials[credential.id] else { return }
            state.identifiers = state.identifiers.filter { $0.value != credential.id }
            try Self.claim(credential, in: &state)
            stored.config = credential.config
            stored.configVersion = credential.configVersion
            stored.identifiers = credential.identifiers
            stored.updatedAt = credential.updatedAt
            state.credentials[credential.id] = stored
        }
    }

    private static func claim(_ credential: CredentialRecord, in state: inout InMemoryState) throws {
        let keys = Set(credential.identifiers).map { InMemoryState.identifierKey(credential.type, $0) }
        if keys.contains(where: { state.identifiers[$0] != nil }) { throw StoreError.conflict("credential identifier") }
        for key in keys { state.identifiers[key] = credential.id }
    }

    func find(id: String) async throws -> CredentialRecord? { box.with { $0.credentials[id] } }

    func find(type: CredentialType, identifier: String) async throws -> CredentialRecord? {
        box.with { state in state.identifiers[InMemoryState.identifierKey(type, identifier)].flatMap { state.credentials[$0] } }
    }

    func list(userID: UUID, type: CredentialType?) async throws -> [CredentialRecord] {
        box.with { state in
            state.credentials.values.filter { $0.userID == userID && (type == nil || $0.type == type) }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    func delete(id: String) async throws -> Bool {
        box.with { state in
            state.identifiers = state.identifiers.filter { $0.value != id }
            return state.credentials.removeValue(forKey: id) != nil
        }
    }

    func deleteAll(userID: UUID, type: CredentialType) async throws -> Int {
        box.with { state in
            let ids = Set(state.credentials.values.filter { $0.userID == userID && $0.type == type }.map(\.id))
            state.identifiers = state.identifiers.filter { !ids.contains($0.value) }
            for id in ids { state.credentials.removeValue(forKey: id) }
            return ids.count
        }
    }

    func recordFailure(id: String, at: Date) async throws -> Int? {
        box.with { state in
            guard state.credentials[id] != nil else { return nil }
            state.credentials[id]!.failureCount += 1
            state.credentials[id]!.updatedAt = at
            return state.credentials[id]!.failureCount
        }
    }

    func resetFailures(id: String) async throws {
        box.with { state in
            state.credentials[id]?.failureCount = 0
            state.credentials[id]?.lockedUntil = nil
        }
    }
}

struct InMemoryClientStore: ClientStore {
    let box: StateBox

    func insert(_ client: ClientRecord) async throws {
        try box.with { state in
            if state.clients[client.id] != nil { throw StoreError.conflict("client") }
            state.clients[client.id] = client
        }
    }

    func find(id: String) async throws -> ClientRecord? { box.with { $0.clients[id] } }
    func findDefault() async throws -> ClientRecord? { box.with { $0.clients.values.first { $0.isDefault } } }
    func list() async throws -> [ClientRecord] { box.with { $0.clients.values.sorted { $0.createdAt < $1.createdAt } } }
    func update(_ client: ClientRecord) async throws { box.with { $0.clients[client.id] = client } }
    func delete(id: String) async throws -> Bool { box.with { $0.clients.removeValue(forKey: id) != nil } }
}

struct InMemorySessionStore: SessionStore {
    let box: StateBox

    func insert(_ session: SessionRecord) async throws { box.with { $0.sessions[session.id] = session } }
    func find(id: UUID) async throws -> SessionRecord? { box.with { $0.sessions[id] } }

    func listLive(userID: UUID, now: Date) async throws -> [SessionRecord] {
        box.with { state in
            state.sessions.values.filter { $0.userID == userID && $0.isLive(at: now) }.sorted { $0.createdAt > $1.createdAt }
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

    func revokeAll(userID: UUID, except: UUID?, at: Date, reason: RevokeReason) async throws -> Int {
        revokeWhere(at: at, reason: reason) { $0.userID == userID && $0.id != except }
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

struct InMemorySigningKeyStore: SigningKeyStore {
    let box: StateBox

    func insert(_ key: SigningKeyRecord) async throws { box.with { $0.signingKeys[key.kid] = key } }

    func listPublished(now: Date) async throws -> [SigningKeyRecord] {
        box.with { state in
            state.signingKeys.values.filter { $0.retiredAt == nil || ($0.publishUntil ?? .distantPast) > now }
                .sorted { ($0.retiredAt == nil ? 0 : 1, -$0.createdAt.timeIntervalSince1970) < ($1.retiredAt == nil ? 0 : 1, -$1.createdAt.timeIntervalSince1970) }
        }
    }

    func retireAll(except kid: String, at: Date, publishUntil: Date) async throws {
        box.with { state in
            for (id, key) in state.signingKeys where id != kid && key.retiredAt == nil {
                state.signingKeys[id]!.retiredAt = at
                state.signingKeys[id]!.publishUntil = publishUntil
            }
        }
    }
}

struct InMemoryAttemptStore: AttemptStore {
    let box: StateBox

    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        box.with { state in
            var count = state.attempts[key] ?? AttemptCount(count: 0, windowStart: now)
            if count.windowStart <= now.addingTimeInterval(-window) { count = AttemptCount(count: 0, windowStart: now) }
            count.count += 1
            state.attempts[key] = count
            return count
        }
    }

    func current(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        box.with { state in
            guard let count = state.attempts[key], count.windowStart > now.addingTimeInterval(-window) else {
                return AttemptCount(count: 0, windowStart: now)
            }
            return count
        }
    }

    func reset(key: String) async throws { box.with { _ = $0.attempts.removeValue(forKey: key) } }
}

struct InMemoryOneTimeCodeStore: OneTimeCodeStore {
    let box: StateBox

    func insert(_ code: OneTimeCodeRecord) async throws { box.with { $0.codes[code.id] = code } }

    func invalidate(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String, at: Date) async throws {
        box.with { state in
            for (id, code) in state.codes
            where code.purpose == purpose && code.identifier == identifier && code.clientID == clientID && code.consumedAt == nil {
                state.codes[id]!.consumedAt = at
            }
        }
    }

    func findOpen(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String) async throws -> OneTimeCodeRecord? {
        box.with { state in
            state.codes.values.filter {
                $0.purpose == purpose && $0.identifier == identifier && $0.clientID == clientID && $0.consumedAt == nil
                    && $0.codeHash != nil
            }.max { $0.createdAt < $1.createdAt }
        }
    }

    func find(tokenHash: String) async throws -> OneTimeCodeRecord? {
        box.with { $0.codes.values.first { $0.tokenHash == tokenHash } }
    }

    func recordAttempt(id: UUID) async throws -> Int? {
        box.with { state in
            guard let code = state.codes[id], code.consumedAt == nil, code.attempts < code.maxAttempts else { return nil }
            state.codes[id]!.attempts += 1
            return code.attempts + 1
        }
    }

    func consume(id: UUID, at: Date) async throws -> Bool {
        box.with { state in
            guard state.codes[id]?.consumedAt == nil, state.codes[id] != nil else { return false }
            state.codes[id]!.consumedAt = at
            return true
        }
    }
}

struct InMemoryOutboxStore: OutboxStore {
    let box: StateBox

    func enqueue(_ message: OutboxMessage) async throws { box.with { $0.outbox[message.id] = message } }

    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxMessage] {
        box.with { state in
            let due = state.outbox.values.filter {
                ($0.status == .pending && $0.dueAt <= now) || ($0.status == .sending && ($0.leaseUntil ?? .distantFuture) <= now)
            }.sorted { $0.dueAt < $1.dueAt }.prefix(limit)
            return due.map { message in
                state.outbox[message.id]!.status = .sending
                state.outbox[message.id]!.leaseUntil = leaseUntil
                state.outbox[message.id]!.attempts += 1
                return state.outbox[message.id]!
            }
        }
    }

    func markSent(id: UUID, at: Date) async throws {
        box.with { state in
            state.outbox[id]?.status = .sent
            state.outbox[id]?.sentAt = at
            state.outbox[id]?.leaseUntil = nil
            state.outbox[id]?.sealedPayload = ""
        }
    }

    func markFailed(id: UUID, error: String, retryAt: Date?, at: Date) async throws {
        box.with { state in
            state.outbox[id]?.status = retryAt == nil ? .dead : .pending
            state.outbox[id]?.lastError = String(error.prefix(1000))
            state.outbox[id]?.dueAt = retryAt ?? at
            state.outbox[id]?.leaseUntil = nil
        }
    }

    func list(status: OutboxMessage.Status?, limit: Int) async throws -> [OutboxMessage] {
        box.with { state in
            Array(state.outbox.values.filter { status == nil || $0.status == status }.sorted { $0.createdAt > $1.createdAt }.prefix(limit))
        }
    }

    func find(id: UUID) async throws -> OutboxMessage? { box.with { $0.outbox[id] } }

    func retry(id: UUID, at: Date) async throws -> Bool {
        box.with { state in
            guard let message = state.outbox[id], message.status == .dead || message.status == .pending else { return false }
            state.outbox[id]!.status = .pending
            state.outbox[id]!.dueAt = at
            state.outbox[id]!.attempts = 0
            state.outbox[id]!.leaseUntil = nil
            return true
        }
    }
}

struct InMemoryAgreementStore: AgreementStore {
    let box: StateBox

    func find(userID: UUID, clientID: String) async throws -> AgreementRecord? {
        box.with { $0.agreements[userID.uuidString + "/" + clientID] }
    }

    func upsert(_ agreement: AgreementRecord) async throws {
        box.with { $0.agreements[agreement.userID.uuidString + "/" + agreement.clientID] = agreement }
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

/// What the SQL databases refuse by constraint and the in-memory stores refuse by hand.
enum InMemoryStoreError: Error {
    case unknownUser(UUID)
}
