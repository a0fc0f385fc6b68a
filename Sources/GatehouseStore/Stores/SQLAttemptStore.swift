import Foundation
import GatehouseCore
import SQLKit

/// Named counters in fixed windows (rate limits, throttles), one atomic statement per count.
///
/// Every statement here takes its rows in ascending key order, and callers that touch several
/// counters in one transaction do the same (``LoginThrottle``): on PostgreSQL a row stays locked
/// until its transaction ends, and two transactions that lock the same two counters in opposite
/// orders deadlock; the database then fails one of them (THR-1).
struct SQLAttemptStore: AttemptStore {
    let db: any SQLDatabase

    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        try await recordFailures(keys: [key], now: now, window: window)[key] ?? AttemptCount(count: 1, windowStart: now)
    }

    func recordFailures(keys: [String], now: Date, window: TimeInterval) async throws -> [String: AttemptCount] {
        guard !keys.isEmpty else { return [:] }
        let nowMs = Columns.millis(now)
        let cutoff = Columns.millis(now.addingTimeInterval(-window))
        // PostgreSQL inserts and locks the rows in the order they are listed.
        let rows = Set(keys).sorted().map { key -> SQLQueryString in "(\(bind: key), 1, \(bind: nowMs))" }.joined(separator: ", ")
        // One statement for every counter, so concurrent attempts on several nodes never lose a count
        // and a sign-in pays one round trip for all its counters.
        let answered = try await db.raw(
            """
            INSERT INTO attempt_counters (counter_key, count, window_start) VALUES \(rows)
            ON CONFLICT (counter_key) DO UPDATE SET
                count = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN 1 ELSE attempt_counters.count + 1 END,
                window_start = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN \(bind: nowMs) ELSE attempt_counters.window_start END
            RETURNING counter_key, count, window_start
            """
        ).all()
        var counts: [String: AttemptCount] = [:]
        for row in answered {
            counts[try row.string("counter_key")] = AttemptCount(count: try row.int("count"), windowStart: try row.date("window_start"))
        }
        return counts
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

    func release(keys: [String]) async throws {
        // One statement per counter: an `IN` list is locked in whatever order the plan reads the
        // table (by key, or by position in the file).
        for key in Set(keys).sorted() {
            try await db.raw("UPDATE attempt_counters SET count = count - 1 WHERE counter_key = \(bind: key) AND count > 0").run()
        }
    }

    func reset(key: String) async throws {
        try await db.raw("DELETE FROM attempt_counters WHERE counter_key = \(bind: key)").run()
    }
}
