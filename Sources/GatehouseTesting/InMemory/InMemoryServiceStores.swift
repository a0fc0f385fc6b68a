import Foundation
import GatehouseCore

// Keys, counters, codes, the outbox and agreements in memory.

struct InMemorySigningKeyStore: SigningKeyStore {
    let box: StateBox

    func insert(_ key: SigningKeyRecord) async throws { box.with { $0.signingKeys[key.kid] = key } }

    func listPublished(now: Date) async throws -> [SigningKeyRecord] {
        box.with { state in
            state.signingKeys.values.filter { $0.retiredAt == nil || ($0.publishUntil ?? .distantPast) > now }
                .sorted {
                    ($0.retiredAt == nil ? 0 : 1, -$0.createdAt.timeIntervalSince1970) < (
                        $1.retiredAt == nil ? 0 : 1, -$1.createdAt.timeIntervalSince1970
                    )
                }
        }
    }

    func retire(algorithm: String, except kid: String, at: Date, publishUntil: Date) async throws {
        box.with { state in
            for (id, key) in state.signingKeys where id != kid && key.algorithm == algorithm && key.retiredAt == nil {
                state.signingKeys[id]!.retiredAt = at
                state.signingKeys[id]!.publishUntil = publishUntil
            }
        }
    }

    func revoke(kid: String, at: Date) async throws -> Bool {
        box.with { state in
            guard let key = state.signingKeys[kid], key.publishUntil.map({ $0 > at }) ?? true else { return false }
            state.signingKeys[kid]!.retiredAt = key.retiredAt ?? at
            state.signingKeys[kid]!.publishUntil = at
            return true
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

    func recordFailures(keys: [String], now: Date, window: TimeInterval) async throws -> [String: AttemptCount] {
        var counts: [String: AttemptCount] = [:]
        for key in keys { counts[key] = try await recordFailure(key: key, now: now, window: window) }
        return counts
    }

    func release(keys: [String]) async throws {
        box.with { state in
            for key in keys {
                if let count = state.attempts[key], count.count > 0 { state.attempts[key]!.count -= 1 }
            }
        }
    }
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

    func renewLease(ids: [UUID], until: Date) async throws {
        box.with { state in
            for id in ids where state.outbox[id]?.status == .sending { state.outbox[id]!.leaseUntil = until }
        }
    }

    func claimDue(now: Date, leaseUntil: Date, limit: Int, channels: Set<OutboxMessage.Channel>) async throws -> [OutboxMessage] {
        box.with { state in
            let due = state.outbox.values.filter {
                channels.contains($0.channel)
                    && (($0.status == .pending && $0.dueAt <= now) || ($0.status == .sending && ($0.leaseUntil ?? .distantFuture) <= now))
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

    func list(status: OutboxMessage.Status?, channel: OutboxMessage.Channel?, limit: Int) async throws -> [OutboxMessage] {
        box.with { state in
            Array(
                state.outbox.values.filter { (status == nil || $0.status == status) && (channel == nil || $0.channel == channel) }.sorted {
                    $0.createdAt > $1.createdAt
                }.prefix(limit))
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

struct InMemoryConsentStore: ConsentStore {
    let box: StateBox

    func find(userID: UUID, clientID: String) async throws -> ConsentRecord? {
        box.with { $0.consents[userID.uuidString + "/" + clientID] }
    }

    func upsert(_ consent: ConsentRecord) async throws {
        box.with { $0.consents[consent.userID.uuidString + "/" + consent.clientID] = consent }
    }

    func list(userID: UUID) async throws -> [ConsentRecord] {
        box.with { s in s.consents.values.filter { $0.userID == userID }.sorted { $0.grantedAt > $1.grantedAt } }
    }

    func delete(userID: UUID, clientID: String) async throws -> Bool {
        box.with { $0.consents.removeValue(forKey: userID.uuidString + "/" + clientID) != nil }
    }
}

struct InMemoryProofReplayStore: ProofReplayStore {
    let box: StateBox

    func claim(key: String, until: Date) async throws -> Bool {
        box.with { state in
            guard state.proofs[key] == nil else { return false }
            state.proofs[key] = until
            return true
        }
    }
}

struct InMemoryDeviceAuthorizationStore: DeviceAuthorizationStore {
    let box: StateBox

    func insert(_ record: DeviceAuthorizationRecord) async throws {
        box.with { $0.deviceAuthorizations[record.deviceCodeHash] = record }
    }

    func find(deviceCodeHash: String) async throws -> DeviceAuthorizationRecord? {
        box.with { $0.deviceAuthorizations[deviceCodeHash] }
    }

    func find(userCodeHash: String) async throws -> DeviceAuthorizationRecord? {
        box.with { state in state.deviceAuthorizations.values.first { $0.userCodeHash == userCodeHash } }
    }

    func polled(deviceCodeHash: String, at: Date, interval: Int) async throws {
        box.with { state in
            state.deviceAuthorizations[deviceCodeHash]?.polledAt = at
            state.deviceAuthorizations[deviceCodeHash]?.interval = interval
        }
    }

    func decide(userCodeHash: String, status: DeviceAuthorizationRecord.Status, sealedCode: String?) async throws -> Bool {
        box.with { state in
            guard let record = state.deviceAuthorizations.values.first(where: { $0.userCodeHash == userCodeHash }),
                record.status == .pending
            else { return false }
            state.deviceAuthorizations[record.deviceCodeHash]?.status = status
            state.deviceAuthorizations[record.deviceCodeHash]?.sealedCode = sealedCode
            return true
        }
    }

    func delete(deviceCodeHash: String) async throws -> Bool {
        box.with { $0.deviceAuthorizations.removeValue(forKey: deviceCodeHash) != nil }
    }
}
