import Foundation
import GatehouseCore
import SQLKit

struct SQLConsoleSessionStore: ConsoleSessionStore {
    let db: any SQLDatabase

    private static let columns = "id, token_hash, kind, operator_name, created_at, expires_at, ended_at"

    func insert(_ r: ConsoleSessionRecord) async throws {
        try await db.raw(
            """
            INSERT INTO console_sessions (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(r.id)), \(bind: r.tokenHash), \(bind: r.kind.rawValue), \(bind: r.operatorName),
                    \(bind: Columns.millis(r.createdAt)), \(bind: Columns.millis(r.expiresAt)), \(bind: Columns.millis(r.endedAt)))
            """
        ).run()
    }

    func consume(tokenHash: String, kind: ConsoleSessionRecord.Kind, at: Date) async throws -> ConsoleSessionRecord? {
        let now = Columns.millis(at)
        return try await db.raw(
            """
            UPDATE console_sessions SET ended_at = \(bind: now)
            WHERE token_hash = \(bind: tokenHash) AND kind = \(bind: kind.rawValue) AND ended_at IS NULL AND expires_at > \(bind: now)
            RETURNING \(unsafeRaw: Self.columns)
            """
        ).first().map(Self.decode)
    }

    func findLive(tokenHash: String, at: Date) async throws -> ConsoleSessionRecord? {
        let now = Columns.millis(at)
        return try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM console_sessions
            WHERE token_hash = \(bind: tokenHash) AND kind = 'session' AND ended_at IS NULL AND expires_at > \(bind: now)
            """
        ).first().map(Self.decode)
    }

    static func decode(_ row: any SQLRow) throws -> ConsoleSessionRecord {
        ConsoleSessionRecord(
            id: try row.uuid("id"), tokenHash: try row.string("token_hash"),
            kind: ConsoleSessionRecord.Kind(rawValue: try row.string("kind")) ?? .session, operatorName: try row.string("operator_name"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"), endedAt: try row.optionalDate("ended_at"))
    }
}

struct SQLActivityStore: ActivityStore {
    let db: any SQLDatabase

    static let types = ["user.signed_in", "user.created", "sign_in.failed"]

    func daily(since: Date) async throws -> DailyActivity {
        let from = Columns.millis(since)
        var activity = DailyActivity()
        // Integer division by a day's milliseconds: the UTC day number, the same in SQLite and PostgreSQL.
        for row in try await db.raw(
            """
            SELECT type, at / 86400000 AS day, COUNT(*) AS n FROM audit_events
            WHERE at >= \(bind: from) AND type IN (\(binds: Self.types)) GROUP BY type, at / 86400000
            """
        ).all() {
            activity.series[try row.string("type"), default: [:]][try row.int("day")] = try row.int("n")
        }
        // A chain keeps only its latest refresh, so the series counts sessions by the day they last
        // refreshed; sessions still on token rows count the same way.
        for row in try await db.raw(
            """
            SELECT day, COUNT(*) AS n FROM (
                SELECT refresh_rotated_at / 86400000 AS day FROM sessions
                WHERE refresh_generation > 0 AND refresh_rotated_at >= \(bind: from)
                UNION ALL
                SELECT MAX(created_at) / 86400000 AS day FROM refresh_tokens
                WHERE parent_hash IS NOT NULL GROUP BY session_id HAVING MAX(created_at) >= \(bind: from)
            ) refreshed GROUP BY day
            """
        ).all() {
            activity.series["refresh", default: [:]][try row.int("day")] = try row.int("n")
        }
        return activity
    }
}
