import Foundation

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

extension OutboxStore {
    public func list(status: OutboxMessage.Status?, limit: Int) async throws -> [OutboxMessage] {
        try await list(status: status, channel: nil, limit: limit)
    }
}
