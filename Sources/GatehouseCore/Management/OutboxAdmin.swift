import Foundation

/// Outbox management, shared by the CLI and the coming admin API: list rows (never their content) and
/// revive dead ones.
public struct OutboxAdmin: Sendable {
    let persistence: any Persistence
    let clock: any WallClock

    public init(persistence: any Persistence, clock: any WallClock) {
        self.persistence = persistence
        self.clock = clock
    }

    /// Newest first; `limit` is clamped to 1…10,000.
    public func list(status: OutboxMessage.Status?, channel: OutboxMessage.Channel? = nil, limit: Int) async throws -> [OutboxMessage] {
        let bounded = max(1, min(limit, 10_000))
        return try await persistence.read { try await $0.outbox.list(status: status, channel: channel, limit: bounded) }
    }

    /// Makes a dead or pending message due now with its attempts reset; false when there is no such message.
    public func retry(id: UUID) async throws -> Bool {
        let now = clock.now()
        return try await persistence.transaction { try await $0.outbox.retry(id: id, at: now) }
    }
}
