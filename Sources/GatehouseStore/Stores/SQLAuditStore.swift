import Foundation
import GatehouseCore
import SQLKit

struct SQLAuditStore: AuditStore {
    let db: any SQLDatabase

    private static let columns = "id, at, type, user_id, client_id, method, reason, account, address_block, user_agent, actor, request_id"

    func append(_ e: AuditEvent) async throws {
        try await db.raw(
            """
            INSERT INTO audit_events (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(e.id)), \(bind: Columns.millis(e.at)), \(bind: e.type), \(bind: e.userID.map(Columns.id)),
                    \(bind: e.clientID), \(bind: e.method), \(bind: e.reason), \(bind: e.account), \(bind: e.addressBlock),
                    \(bind: e.userAgent), \(bind: e.actor), \(bind: e.requestID))
            """
        ).run()
    }

    func list(_ query: AuditQuery) async throws -> [AuditEvent] {
        // Filters are appended one by one; each binds its own value, so no text from the query is SQL.
        var sql: SQLQueryString = "SELECT \(unsafeRaw: Self.columns) FROM audit_events WHERE 1 = 1"
        if let user = query.userID { sql = sql + " AND user_id = \(bind: Columns.id(user))" }
        if let type = query.type { sql = sql + " AND type = \(bind: type)" }
        if let client = query.clientID { sql = sql + " AND client_id = \(bind: client)" }
        if let account = query.account { sql = sql + " AND account = \(bind: account)" }
        if let since = query.since { sql = sql + " AND at >= \(bind: Columns.millis(since))" }
        if !query.newestFirst, let (at, id) = query.after {
            let millis = Columns.millis(at)
            sql = sql + " AND (at > \(bind: millis) OR (at = \(bind: millis) AND id > \(bind: Columns.id(id))))"
        }
        sql = sql + (query.newestFirst ? " ORDER BY at DESC, id DESC" : " ORDER BY at, id")
        sql = sql + " LIMIT \(bind: max(1, min(query.limit, 10_000)))"
        return try await db.raw(sql).all().map(Self.decode)
    }

    static func decode(_ row: any SQLRow) throws -> AuditEvent {
        AuditEvent(
            id: try row.uuid("id"), at: try row.date("at"), type: try row.string("type"),
            userID: try row.optionalString("user_id").flatMap(UUID.init(uuidString:)), clientID: try row.optionalString("client_id"),
            method: try row.optionalString("method"), reason: try row.optionalString("reason"), account: try row.optionalString("account"),
            addressBlock: try row.optionalString("address_block"), userAgent: try row.optionalString("user_agent"),
            actor: try row.optionalString("actor"), requestID: try row.optionalString("request_id"))
    }
}
