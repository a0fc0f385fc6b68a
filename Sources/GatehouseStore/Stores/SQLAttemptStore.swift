import Foundation
import GatehouseCore
import SQLKit

/// Named counters in fixed windows (rate limits, throttles), one atomic statement per count.
struct SQLAttemptStore: AttemptStore {
    let db: any SQLDatabase

    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        let nowMs = Columns.millis(now)
        let cutoff = Columns.millis(now.addingTimeInterval(-window))
        // One statement, so concurrent failures on several nodes never lose a count.
        let row = try await db.raw(
            """
            INSERT INTO attempt_counters (counter_key, count, window_start) VALUES (\(bind: key), 1, \(bind: nowMs))
            ON CONFLICT (counter_key) DO UPDATE SET
                count = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN 1 ELSE attempt_counters.count + 1 END,
                window_start = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN \(bind: nowMs) ELSE attempt_counters.window_start END
            RETURNING count, window_start
            """
        ).first()
        guard let row else { return AttemptCount(count: 1, windowStart: now) }
        return AttemptCount(count: try row.int("count"), windowStart: try row.date("window_start"))
    }

    func current(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        guard
            let row = try await db.raw(
                "SELECT count, window_start FROM attempt_counters WHERE counter_key = \(bind: key)"
            ).first()
        else { return AttemptCount(count: 0, windowStart: now) }
        let start = try row.date("window_start")
        guard start > now.addingTimeInterval(-window) else { return AttemptCount(count: 0, windowStart: now) }
        return AttemptCount(count: try row.int("count"), windowStart: start)
    }

    func release(key: String) async throws {
        try await db.raw(
            "UPDATE attempt_counters SET count = count - 1 WHERE counter_key = \(bind: key) AND count > 0"
        ).run()
    }

    func reset(key: String) async throws {
        try await db.raw("DELETE FROM attempt_counters WHERE counter_key = \(bind: key)").run()
    }
}
