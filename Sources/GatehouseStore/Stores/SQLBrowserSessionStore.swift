import Foundation
import GatehouseCore
import SQLKit

struct SQLBrowserSessionStore: BrowserSessionStore {
    let db: any SQLDatabase

    private static let columns = """
        id, token_hash, user_id, amr, auth_time, user_agent, ip_address, created_at, last_seen_at, expires_at, revoked_at
        """

    func insert(_ s: BrowserSessionRecord) async throws {
        try await db.raw(
            """
            INSERT INTO browser_sessions (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(s.id)), \(bind: s.tokenHash), \(bind: Columns.id(s.userID)), \(bind: try Columns.json(s.amr)),
                    \(bind: Columns.millis(s.authTime)), \(bind: s.userAgent), \(bind: s.ipAddress),
                    \(bind: Columns.millis(s.createdAt)), \(bind: Columns.millis(s.lastSeenAt)),
                    \(bind: Columns.millis(s.expiresAt)), \(bind: Columns.millis(s.revokedAt)))
            """
        ).run()
    }

    func find(tokenHash: String) async throws -> BrowserSessionRecord? {
        try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM browser_sessions WHERE token_hash = \(bind: tokenHash)"
        ).first().map(Self.decode)
    }

    func touch(id: UUID, at: Date) async throws {
        try await db.raw(
            "UPDATE browser_sessions SET last_seen_at = \(bind: Columns.millis(at)) WHERE id = \(bind: Columns.id(id))"
        ).run()
    }

    func reauthenticated(id: UUID, amr: [String], at: Date) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE browser_sessions SET amr = \(bind: try Columns.json(amr)), auth_time = \(bind: Columns.millis(at)),
                last_seen_at = \(bind: Columns.millis(at))
            WHERE id = \(bind: Columns.id(id)) AND revoked_at IS NULL RETURNING id
            """
        ).all().isEmpty
    }

    func revoke(id: UUID, at: Date) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE browser_sessions SET revoked_at = \(bind: Columns.millis(at))
            WHERE id = \(bind: Columns.id(id)) AND revoked_at IS NULL RETURNING id
            """
        ).all().isEmpty)
    }

    func revokeAll(userID: UUID, at: Date) async throws -> Int {
        try await db.raw(
            """
            UPDATE browser_sessions SET revoked_at = \(bind: Columns.millis(at))
            WHERE user_id = \(bind: Columns.id(userID)) AND revoked_at IS NULL RETURNING id
            """
        ).all().count
    }

    static func decode(_ row: any SQLRow) throws -> BrowserSessionRecord {
        BrowserSessionRecord(
            id: try row.uuid("id"), tokenHash: try row.string("token_hash"), userID: try row.uuid("user_id"),
            amr: try Columns.decodeStrings(try row.string("amr")), authTime: try row.date("auth_time"),
            userAgent: try row.optionalString("user_agent"), ipAddress: try row.optionalString("ip_address"),
            createdAt: try row.date("created_at"), lastSeenAt: try row.date("last_seen_at"),
            expiresAt: try row.date("expires_at"), revokedAt: try row.optionalDate("revoked_at"))
    }
}
