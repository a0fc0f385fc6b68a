import Foundation

/// Applications.
public protocol ClientStore: Sendable {
    /// Throws ``StoreError/conflict`` when the id is taken.
    func insert(_ client: ClientRecord) async throws
    func find(id: String) async throws -> ClientRecord?
    func findDefault() async throws -> ClientRecord?
    func list() async throws -> [ClientRecord]
    func update(_ client: ClientRecord) async throws
    /// Returns whether a row was deleted.
    func delete(id: String) async throws -> Bool
}

/// Signing keys.
public protocol SigningKeyStore: Sendable {
    func insert(_ key: SigningKeyRecord) async throws
    /// Every key that may still verify a token at `now` (the current one first).
    func listPublished(now: Date) async throws -> [SigningKeyRecord]
    /// Retires every key but `kid`, publishing each until `publishUntil`.
    func retireAll(except kid: String, at: Date, publishUntil: Date) async throws
    /// Ends a key's publication now (retiring it if it was current); returns whether it was published.
    func revoke(kid: String, at: Date) async throws -> Bool
}

/// The terms versions each user accepted, per client.
public protocol AgreementStore: Sendable {
    func find(userID: UUID, clientID: String) async throws -> AgreementRecord?
    func upsert(_ agreement: AgreementRecord) async throws
}

/// The durable outbox.
public protocol OutboxStore: Sendable {
    func enqueue(_ message: OutboxMessage) async throws
    /// Leases up to `limit` due messages of `channels` to this caller until `leaseUntil`.
    func claimDue(now: Date, leaseUntil: Date, limit: Int, channels: Set<OutboxMessage.Channel>) async throws -> [OutboxMessage]
    /// Extends the lease of rows still being sent.
    func renewLease(ids: [UUID], until: Date) async throws
    func markSent(id: UUID, at: Date) async throws
    func markFailed(id: UUID, error: String, retryAt: Date?, at: Date) async throws
    func list(status: OutboxMessage.Status?, channel: OutboxMessage.Channel?, limit: Int) async throws -> [OutboxMessage]
    func find(id: UUID) async throws -> OutboxMessage?
    func retry(id: UUID, at: Date) async throws -> Bool
}

/// What may be forgotten: rows nothing reads any more.
/// The append-only audit log.
public protocol AuditStore: Sendable {
    func append(_ event: AuditEvent) async throws
    /// Oldest first, at most `query.limit`.
    func list(_ query: AuditQuery) async throws -> [AuditEvent]
}

/// Operators' console links and sessions.
public protocol ConsoleSessionStore: Sendable {
    func insert(_ record: ConsoleSessionRecord) async throws
    /// Ends a live record of `kind` with this hash and returns it: one statement, so a link opens one
    /// session however many browsers race for it.
    func consume(tokenHash: String, kind: ConsoleSessionRecord.Kind, at: Date) async throws -> ConsoleSessionRecord?
    /// A live session by its token's hash.
    func findLive(tokenHash: String, at: Date) async throws -> ConsoleSessionRecord?
}

/// What the console's overview charts count.
public protocol ActivityStore: Sendable {
    /// Sign-ins, sign-ups and failed sign-ins (from the audit log) and refreshes (rotated refresh
    /// tokens) per UTC day since `since`.
    func daily(since: Date) async throws -> DailyActivity
}

public enum ExpiredRows: String, Sendable, CaseIterable {
    /// Counters whose window ended.
    case attemptCounters = "attempt_counters"
    /// Codes and links past their lifetime.
    case oneTimeCodes = "one_time_codes"
    /// Persisted flows (challenges, hosted-page visits) past their lifetime.
    case flows
    /// Refresh tokens past their expiry: presenting one can no longer reveal anything.
    case refreshTokens = "refresh_tokens"
    /// Sessions that ended (revoked or expired) long enough ago, with their tokens.
    case sessions
    case browserSessions = "browser_sessions"
    /// Delivered messages (they keep the recipient), and undeliverable ones past re-driving.
    case outbox
    /// Audit events past the retention.
    case auditEvents = "audit_events"
    /// Console links and sessions that expired or ended.
    case consoleSessions = "console_sessions"
}

/// Deletes old rows in small batches, so no clean-up holds the writer for long.
public protocol HousekeepingStore: Sendable {
    /// Deletes at most `limit` rows of `kind` older than `before` (per its own notion of age); returns
    /// how many went.
    func purge(_ kind: ExpiredRows, before: Date, limit: Int) async throws -> Int
}

extension OutboxStore {
    public func list(status: OutboxMessage.Status?, limit: Int) async throws -> [OutboxMessage] {
        try await list(status: status, channel: nil, limit: limit)
    }
}
