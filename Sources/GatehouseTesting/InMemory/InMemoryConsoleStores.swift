import Foundation
import GatehouseCore

struct InMemoryConsoleSessionStore: ConsoleSessionStore {
    let box: StateBox

    func insert(_ record: ConsoleSessionRecord) async throws { box.with { $0.console[record.id] = record } }

    func consume(tokenHash: String, kind: ConsoleSessionRecord.Kind, at: Date) async throws -> ConsoleSessionRecord? {
        box.with { s in
            guard var record = s.console.values.first(where: { $0.tokenHash == tokenHash && $0.kind == kind && $0.isLive(at: at) })
            else { return nil }
            record.endedAt = at
            s.console[record.id] = record
            return record
        }
    }

    func findLive(tokenHash: String, at: Date) async throws -> ConsoleSessionRecord? {
        box.with { s in s.console.values.first { $0.tokenHash == tokenHash && $0.kind == .session && $0.isLive(at: at) } }
    }
}

struct InMemoryActivityStore: ActivityStore {
    let box: StateBox

    func daily(since: Date) async throws -> DailyActivity {
        box.with { s in
            func day(_ date: Date) -> Int { Int((date.timeIntervalSince1970 * 1000).rounded()) / 86_400_000 }
            var activity = DailyActivity()
            for event in s.audit where event.at >= since && ["user.signed_in", "user.created", "sign_in.failed"].contains(event.type) {
                activity.series[event.type, default: [:]][day(event.at), default: 0] += 1
            }
            for session in s.sessions.values {
                guard let chain = session.refreshChain, chain.generation > 0, chain.rotatedAt >= since else { continue }
                activity.series["refresh", default: [:]][day(chain.rotatedAt), default: 0] += 1
            }
            return activity
        }
    }
}
