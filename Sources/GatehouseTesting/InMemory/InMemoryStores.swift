import Foundation
import GatehouseCore

/// The stores over one ``StateBox``.
struct InMemoryStores: Stores {
    let box: StateBox

    var users: any UserStore { InMemoryUserStore(box: box) }
    var directory: any UserDirectoryStore { InMemoryUserDirectoryStore(box: box) }
    var credentials: any CredentialStore { InMemoryCredentialStore(box: box) }
    var clients: any ClientStore { InMemoryClientStore(box: box) }
    var sessions: any SessionStore { InMemorySessionStore(box: box) }
    var refreshTokens: any RefreshTokenStore { InMemoryRefreshTokenStore(box: box) }
    var signingKeys: any SigningKeyStore { InMemorySigningKeyStore(box: box) }
    var attempts: any AttemptStore { InMemoryAttemptStore(box: box) }
    var proofs: any ProofReplayStore { InMemoryProofReplayStore(box: box) }
    var devices: any DeviceAuthorizationStore { InMemoryDeviceAuthorizationStore(box: box) }
    var codes: any OneTimeCodeStore { InMemoryOneTimeCodeStore(box: box) }
    var outbox: any OutboxStore { InMemoryOutboxStore(box: box) }
    var audit: any AuditStore { InMemoryAuditStore(box: box) }
    var console: any ConsoleSessionStore { InMemoryConsoleSessionStore(box: box) }
    var activity: any ActivityStore { InMemoryActivityStore(box: box) }
    var agreements: any AgreementStore { InMemoryAgreementStore(box: box) }
    var flows: any FlowStore { InMemoryFlowStore(box: box) }
    var browserSessions: any BrowserSessionStore { InMemoryBrowserSessionStore(box: box) }
    var consents: any ConsentStore { InMemoryConsentStore(box: box) }
    var housekeeping: any HousekeepingStore { InMemoryHousekeepingStore(box: box) }
}

struct InMemoryHousekeepingStore: HousekeepingStore {
    let box: StateBox

    func purge(_ kind: ExpiredRows, before: Date, limit: Int) async throws -> Int {
        box.with { s in
            func drop<K: Hashable, V>(_ rows: inout [K: V], _ old: (V) -> Bool) -> Int {
                let keys = rows.filter { old($0.value) }.keys.prefix(limit)
                for key in keys { rows[key] = nil }
                return keys.count
            }
            switch kind {
            case .attemptCounters: return drop(&s.attempts) { $0.windowStart < before }
            case .dpopProofs: return drop(&s.proofs) { $0 < before }
            case .deviceAuthorizations: return drop(&s.deviceAuthorizations) { $0.expiresAt < before }
            case .oneTimeCodes: return drop(&s.codes) { $0.expiresAt < before }
            case .flows: return drop(&s.flows) { $0.expiresAt < before }
            case .refreshTokens: return drop(&s.refreshTokens) { $0.expiresAt < before }
            case .sessions:
                let gone = drop(&s.sessions) { $0.expiresAt < before || ($0.revokedAt.map { $0 < before } ?? false) }
                let live = Set(s.sessions.keys)
                s.refreshTokens = s.refreshTokens.filter { live.contains($0.value.sessionID) }
                return gone
            case .browserSessions:
                return drop(&s.browserSessions) { $0.expiresAt < before || ($0.revokedAt.map { $0 < before } ?? false) }
            case .consoleSessions: return drop(&s.console) { $0.expiresAt < before }
            case .anonymousUsers:
                let active = Set(s.sessions.values.filter { $0.lastUsedAt >= before }.map(\.userID))
                let gone = drop(&s.users) { $0.isAnonymous && $0.createdAt < before && !active.contains($0.id) }
                let users = Set(s.users.keys)
                s.sessions = s.sessions.filter { users.contains($0.value.userID) }
                return gone
            case .auditEvents:
                let count = s.audit.count
                s.audit.removeAll { $0.at < before }
                return count - s.audit.count
            case .outbox:
                return drop(&s.outbox) {
                    ($0.status == .sent && ($0.sentAt.map { $0 < before } ?? false)) || ($0.status == .dead && $0.createdAt < before)
                }
            }
        }
    }
}

struct InMemoryUserStore: UserStore {
    let box: StateBox

    func insert(_ user: UserRecord) async throws {
        try box.with { state in
            let taken = state.users.values.contains {
                $0.id == user.id || (user.email != nil && $0.email == user.email) || (user.phone != nil && $0.phone == user.phone)
                    || (user.username != nil && $0.username == user.username)
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
    func find(username: String) async throws -> UserRecord? {
        box.with { s in s.users.values.first { $0.username == username }.map(s.withPasswordFlag) }
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

    func list(userID: UUID, types: [CredentialType]) async throws -> [CredentialRecord] {
        box.with { state in
            state.credentials.values.filter { $0.userID == userID && types.contains($0.type) }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    func delete(id: String) async throws -> Bool {
        box.with { state in
            state.identifiers = state.identifiers.filter { $0.value != id }
            return state.credentials.removeValue(forKey: id) != nil
        }
    }

    func count(userID: UUID, type: CredentialType) async throws -> Int {
        box.with { state in state.credentials.values.filter { $0.userID == userID && $0.type == type }.count }
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

    func resetFailures(id: String) async throws -> Bool {
        box.with { state in
            guard state.credentials[id] != nil else { return false }
            state.credentials[id]!.failureCount = 0
            state.credentials[id]!.lockedUntil = nil
            return true
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

struct InMemoryAuditStore: AuditStore {
    let box: StateBox

    func append(_ event: AuditEvent) async throws { box.with { $0.audit.append(event) } }

    func list(_ query: AuditQuery) async throws -> [AuditEvent] {
        box.with { state in
            let matching = state.audit.filter { event in
                (query.userID == nil || event.userID == query.userID) && (query.type == nil || event.type == query.type)
                    && (query.clientID == nil || event.clientID == query.clientID)
                    && (query.account == nil || event.account == query.account)
                    && (query.since.map { event.at >= $0 } ?? true)
                    && (query.newestFirst
                        || query.after.map {
                            event.at > $0.at || (event.at == $0.at && event.id.uuidString.lowercased() > $0.id.uuidString.lowercased())
                        } ?? true)
            }
            let sorted = matching.sorted { ($0.at, $0.id.uuidString.lowercased()) < ($1.at, $1.id.uuidString.lowercased()) }
            return Array((query.newestFirst ? Array(sorted.reversed()) : sorted).prefix(query.limit))
        }
    }
}
