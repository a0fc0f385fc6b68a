import Foundation
import GatehouseAPI
import GatehouseCore
import SQLKit

struct SQLUserDirectoryStore: UserDirectoryStore {
    let db: any SQLDatabase

    func search(_ search: UserSearch) async throws -> [UserRecord] {
        // Filters are appended one by one; each binds its own value, so no text from the query is SQL.
        var sql: SQLQueryString = "SELECT \(unsafeRaw: SQLUserStore.columns) FROM users u WHERE 1 = 1"
        if let id = search.id { sql = sql + " AND u.id = \(bind: Columns.id(id))" }
        if let email = search.email { sql = sql + " AND u.email LIKE \(bind: Self.prefixPattern(email.lowercased())) ESCAPE '\\'" }
        if let phone = search.phone { sql = sql + " AND u.phone LIKE \(bind: Self.prefixPattern(phone)) ESCAPE '\\'" }
        if let state = search.state { sql = sql + " AND u.state = \(bind: state.rawValue)" }
        if let type = search.credentialType {
            sql = sql + " AND EXISTS (SELECT 1 FROM credentials c WHERE c.user_id = u.id AND c.type = \(bind: type))"
        }
        if let date = search.createdAfter { sql = sql + " AND u.created_at >= \(bind: Columns.millis(date))" }
        if let date = search.createdBefore { sql = sql + " AND u.created_at < \(bind: Columns.millis(date))" }
        if let date = search.signedInAfter { sql = sql + " AND u.last_login_at >= \(bind: Columns.millis(date))" }
        if let date = search.signedInBefore { sql = sql + " AND u.last_login_at < \(bind: Columns.millis(date))" }
        if let (at, id) = search.after {
            let millis = Columns.millis(at)
            sql = sql + " AND (u.created_at > \(bind: millis) OR (u.created_at = \(bind: millis) AND u.id > \(bind: Columns.id(id))))"
        }
        sql = sql + " ORDER BY u.created_at, u.id LIMIT \(bind: max(1, min(search.limit, 1000)))"
        return try await db.raw(sql).all().map(SQLUserStore.decode)
    }

    func sessions(userID: UUID, limit: Int) async throws -> [SessionRecord] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: SQLSessionStore.columns) FROM sessions WHERE user_id = \(bind: Columns.id(userID))
            ORDER BY created_at DESC, id LIMIT \(bind: max(1, min(limit, 1000)))
            """
        ).all().map(SQLSessionStore.decode)
    }

    func agreements(userID: UUID) async throws -> [AgreementRecord] {
        try await db.raw(
            """
            SELECT client_id, platform_version, client_version, accepted_at FROM agreements
            WHERE user_id = \(bind: Columns.id(userID)) ORDER BY client_id
            """
        ).all().map { row in
            AgreementRecord(
                userID: userID, clientID: try row.string("client_id"), platformVersion: try row.optionalString("platform_version"),
                clientVersion: try row.optionalString("client_version"), acceptedAt: try row.date("accepted_at"))
        }
    }

    func erase(userID: UUID, addresses: [String]) async throws -> Bool {
        let id = Columns.id(userID)
        if !addresses.isEmpty {
            try await db.raw("DELETE FROM one_time_codes WHERE identifier IN (\(binds: addresses))").run()
            try await db.raw("DELETE FROM outbox WHERE channel IN ('email', 'sms') AND recipient IN (\(binds: addresses))").run()
        }
        // The rest hangs off the user by foreign keys with ON DELETE CASCADE (credentials and their
        // identifiers, sessions and refresh tokens, browser sessions, flows, agreements, codes).
        return try await !db.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").all().isEmpty
    }

    /// `LIKE` matches the prefix literally: `%`, `_` and the escape itself lose their meaning.
    static func prefixPattern(_ prefix: String) -> String {
        var escaped = ""
        for character in prefix {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "%"
    }
}
