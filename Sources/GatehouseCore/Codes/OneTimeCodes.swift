import Foundation
import GatehouseAPI

/// Issues and redeems one-time codes and link tokens. Every rule lives here once: stored hashed, bound
/// to purpose, identifier and client, a bounded number of attempts counted in the database, consumed
/// atomically.
public struct OneTimeCodes: Sendable {
    let persistence: any Persistence
    let secret: ServerSecret
    let clock: any WallClock
    let maxAttempts: Int
    let lifetime: TimeInterval

    init(persistence: any Persistence, secret: ServerSecret, clock: any WallClock, maxAttempts: Int, lifetime: TimeInterval) {
        self.persistence = persistence
        self.secret = secret
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.lifetime = lifetime
    }

    public struct Issued: Sendable {
        public var code: String
        public var token: String?
    }

    /// A fresh code (and, when `linkTTL` is given, a link token), killing earlier ones for the same binding.
    public func issue(
        purpose: OneTimeCodeRecord.Purpose, identifier: String, client: ClientRecord, userID: UUID?,
        linkTTL: TimeInterval?, data: String?, stores: any Stores
    ) async throws -> Issued {
        let now = clock.now()
        let code = Secrets.numericCode(digits: 6)
        try await stores.codes.invalidate(purpose: purpose, identifier: identifier, clientID: client.id, at: now)
        // Code and link are separate records: they expire on different clocks (minutes vs hours).
        try await stores.codes.insert(
            OneTimeCodeRecord(
                purpose: purpose, identifier: identifier, clientID: client.id, userID: userID,
                codeHash: secret.codeHash(code, binding: Self.binding(purpose, client.id, identifier)), tokenHash: nil,
                maxAttempts: maxAttempts, data: data, createdAt: now,
                expiresAt: now.addingTimeInterval(lifetime)))
        var token: String?
        if let linkTTL {
            let fresh = Secrets.token(prefix: "gh_l_")
            try await stores.codes.insert(
                OneTimeCodeRecord(
                    purpose: purpose, identifier: identifier, clientID: client.id, userID: userID, codeHash: nil,
                    tokenHash: Secrets.sha256Hex(fresh), maxAttempts: 1, data: data, createdAt: now,
                    expiresAt: now.addingTimeInterval(linkTTL)))
            token = fresh
        }
        return Issued(code: code, token: token)
    }

    /// Checks `code` against the open code for this binding and consumes it. Wrong: 401 `invalid_code`
    /// with the attempts left; none left, expired or never sent: 401 `code_expired`.
    public func redeem(
        code: String, purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String
    ) async throws
        -> OneTimeCodeRecord
    {
        let now = clock.now()
        let expected = secret.codeHashes(code, binding: Self.binding(purpose, clientID, identifier))
        let outcome: Result<OneTimeCodeRecord, GatehouseError> = try await persistence.transaction { stores in
            guard let record = try await stores.codes.findOpen(purpose: purpose, identifier: identifier, clientID: clientID),
                record.expiresAt > now
            else {
                // No open code: answer as a wrong guess against one would be answered, counting down the
                // same way, so a guess cannot tell whether a code (and so an account) exists.
                let max = maxAttempts
                let count = try await stores.attempts.recordFailure(
                    key: "code:none:" + Secrets.sha256Hex(Self.binding(purpose, clientID, identifier)), now: now,
                    window: lifetime)
                return .failure(count.count > max ? Self.expired : Self.invalid(remaining: Swift.max(0, max - count.count)))
            }
            // The attempt is counted before comparing, in the same statement that checks the bound.
            guard let attempts = try await stores.codes.recordAttempt(id: record.id) else { return .failure(Self.expired) }
            guard let stored = record.codeHash, Secrets.constantTimeEqualsAny(stored, expected) else {
                let left = max(0, record.maxAttempts - attempts)
                return .failure(Self.invalid(remaining: left))
            }
            guard try await stores.codes.consume(id: record.id, at: now) else { return .failure(Self.expired) }
            try await stores.codes.invalidate(purpose: purpose, identifier: identifier, clientID: clientID, at: now)
            return .success(record)
        }
        return try outcome.get()
    }

    /// Consumes a link token of this purpose. Unknown, used or expired: 401 `code_expired`.
    /// `endsSiblings`: whether the other open tokens of the same purpose, identifier and client end
    /// with it. A mailed link's do (one proof is enough); an authorization code's must not, since each
    /// is a sign-in of its own (two tabs, two devices signing the same user in to one client).
    public func redeem(token: String, purpose: OneTimeCodeRecord.Purpose, endsSiblings: Bool = true) async throws -> OneTimeCodeRecord {
        let now = clock.now()
        guard token.utf8.count <= 256 else { throw Self.expired }
        let hash = Secrets.sha256Hex(token)
        let outcome: Result<OneTimeCodeRecord, GatehouseError> = try await persistence.transaction { stores in
            guard let record = try await stores.codes.find(tokenHash: hash), record.purpose == purpose,
                record.consumedAt == nil, record.expiresAt > now,
                try await stores.codes.consume(id: record.id, at: now)
            else { return .failure(Self.expired) }
            if endsSiblings {
                try await stores.codes.invalidate(purpose: purpose, identifier: record.identifier, clientID: record.clientID, at: now)
            }
            return .success(record)
        }
        return try outcome.get()
    }

    /// The open link `token` names, without using it: the client it belongs to and the account it is
    /// for, before anything else is decided. Nil when unknown, used or expired.
    public func peek(token: String, purpose: OneTimeCodeRecord.Purpose) async throws -> OneTimeCodeRecord? {
        guard token.utf8.count <= 256 else { return nil }
        let hash = Secrets.sha256Hex(token)
        let now = clock.now()
        guard let record = try await persistence.read({ try await $0.codes.find(tokenHash: hash) }),
            record.purpose == purpose, record.consumedAt == nil, record.expiresAt > now
        else { return nil }
        return record
    }

    /// Whether `token` names an open link of `purpose`, without using it (a page that asks first).
    public func isOpen(token: String, purpose: OneTimeCodeRecord.Purpose) async throws -> Bool {
        try await peek(token: token, purpose: purpose) != nil
    }

    static func binding(_ purpose: OneTimeCodeRecord.Purpose, _ clientID: String, _ identifier: String) -> String {
        "\(purpose.rawValue):\(clientID):\(identifier)"
    }

    static let expired = GatehouseError.codeExpired

    static func invalid(remaining: Int) -> GatehouseError { .invalidCode(remaining: remaining) }
}
