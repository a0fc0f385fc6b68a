import Foundation

/// Forgets what nothing reads any more, in small batches each in its own transaction, so a pass
/// never holds the (SQLite) writer for long. Safe on every node at once: a row is deleted once.
public struct Housekeeping: Sendable {
    let services: CoreServices
    /// Rows per batch.
    public var batch = 500

    public init(services: CoreServices) { self.services = services }

    /// How long each kind of row is kept after it stopped mattering.
    func cutoff(_ kind: ExpiredRows, now: Date) -> Date {
        let day: TimeInterval = 24 * 3600
        switch kind {
        case .attemptCounters:
            // A counter must outlive the longest window that may still count it.
            let settings = services.settings
            let windows = settings.rateLimits.limits.values.map(\.window) + [settings.throttle.window, settings.sendCooldown, 3600]
            return now.addingTimeInterval(-max(day, windows.max() ?? day))
        case .dpopProofs, .deviceAuthorizations: return now
        case .oneTimeCodes, .flows, .refreshTokens, .consoleSessions: return now.addingTimeInterval(-day)
        case .outbox: return now.addingTimeInterval(-7 * day)
        case .sessions, .browserSessions: return now.addingTimeInterval(-30 * day)
        case .auditEvents: return now.addingTimeInterval(-services.settings.auditRetention)
        case .anonymousUsers: return now.addingTimeInterval(-services.settings.anonymousIdleTTL)
        }
    }

    /// One pass over every kind; returns how many rows of each went.
    @discardableResult
    public func run() async throws -> [ExpiredRows: Int] {
        let now = services.clock.now()
        var purged: [ExpiredRows: Int] = [:]
        for kind in ExpiredRows.allCases {
            let before = cutoff(kind, now: now)
            var total = 0
            while true {
                let limit = batch
                let count = try await services.persistence.transaction {
                    try await $0.housekeeping.purge(kind, before: before, limit: limit)
                }
                total += count
                if count < limit { break }
                await Task.yield()
            }
            if total > 0 { purged[kind] = total }
        }
        return purged
    }
}
