import Foundation
import GatehouseCore

struct InMemoryUserDirectoryStore: UserDirectoryStore {
    let box: StateBox

    func search(_ search: UserSearch) async throws -> [UserRecord] {
        box.with { s in
            // The SQL order: creation time in milliseconds, then the id's lowercase text.
            func key(_ date: Date, _ id: UUID) -> (Int, String) {
                (Int((date.timeIntervalSince1970 * 1000).rounded()), id.uuidString.lowercased())
            }
            return s.users.values.filter { user in
                if let id = search.id, user.id != id { return false }
                if let email = search.email, !(user.email ?? "").hasPrefix(email.lowercased()) || user.email == nil { return false }
                if let phone = search.phone, !(user.phone ?? "").hasPrefix(phone) || user.phone == nil { return false }
                if let state = search.state, user.state != state { return false }
                if let type = search.credentialType,
                    !s.credentials.values.contains(where: { $0.userID == user.id && $0.type.rawValue == type })
                {
                    return false
                }
                if let date = search.createdAfter, user.createdAt < date { return false }
                if let date = search.createdBefore, user.createdAt >= date { return false }
                if let date = search.signedInAfter, (user.lastLoginAt.map { $0 < date } ?? true) { return false }
                if let date = search.signedInBefore, (user.lastLoginAt.map { $0 >= date } ?? true) { return false }
                if let (at, id) = search.after, key(user.createdAt, user.id) <= key(at, id) { return false }
                return true
            }
            .sorted { key($0.createdAt, $0.id) < key($1.createdAt, $1.id) }
            .prefix(max(1, min(search.limit, 1000)))
            .map(s.withPasswordFlag)
        }
    }

    func sessions(userID: UUID, limit: Int) async throws -> [SessionRecord] {
        box.with { s in
            Array(s.sessions.values.filter { $0.userID == userID }.sorted { $0.createdAt > $1.createdAt }.prefix(limit))
        }
    }

    func agreements(userID: UUID) async throws -> [AgreementRecord] {
        box.with { s in s.agreements.values.filter { $0.userID == userID }.sorted { $0.clientID < $1.clientID } }
    }

    func erase(userID: UUID, addresses: [String]) async throws -> Bool {
        box.with { s in
            guard s.users.removeValue(forKey: userID) != nil else { return false }
            let credentials = Set(s.credentials.values.filter { $0.userID == userID }.map(\.id))
            s.credentials = s.credentials.filter { !credentials.contains($0.key) }
            s.identifiers = s.identifiers.filter { !credentials.contains($0.value) }
            let sessions = Set(s.sessions.values.filter { $0.userID == userID }.map(\.id))
            s.sessions = s.sessions.filter { !sessions.contains($0.key) }
            s.refreshTokens = s.refreshTokens.filter { !sessions.contains($0.value.sessionID) }
            s.browserSessions = s.browserSessions.filter { $0.value.userID != userID }
            s.flows = s.flows.filter { $0.value.userID != userID }
            s.agreements = s.agreements.filter { $0.value.userID != userID }
            s.consents = s.consents.filter { $0.value.userID != userID }
            s.codes = s.codes.filter { $0.value.userID != userID && !addresses.contains($0.value.identifier) }
            s.outbox = s.outbox.filter { $0.value.channel == .webhook || !addresses.contains($0.value.recipient) }
            return true
        }
    }
}
