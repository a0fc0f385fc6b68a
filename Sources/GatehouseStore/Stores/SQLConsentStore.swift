import Foundation
import GatehouseCore
import SQLKit

struct SQLConsentStore: ConsentStore {
    let db: any SQLDatabase

    func find(userID: UUID, clientID: String) async throws -> ConsentRecord? {
        try await db.raw(
            """
            SELECT user_id, client_id, scopes, granted_at FROM consents
            WHERE user_id = \(bind: Columns.id(userID)) AND client_id = \(bind: clientID)
            """
        ).first().map(Self.decode)
    }

    func upsert(_ c: ConsentRecord) async throws {
        try await db.raw(
            """
            INSERT INTO consents (user_id, client_id, scopes, granted_at)
            VALUES (\(bind: Columns.id(c.userID)), \(bind: c.clientID), \(bind: try Columns.json(c.scopes)),
                    \(bind: Columns.millis(c.grantedAt)))
            ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = excluded.granted_at
            """
        ).run()
    }

    func list(userID: UUID) async throws -> [ConsentRecord] {
        try await db.raw(
            """
            SELECT user_id, client_id, scopes, granted_at FROM consents
            WHERE user_id = \(bind: Columns.id(userID)) ORDER BY granted_at DESC LIMIT 500
            """
        ).all().map(Self.decode)
    }

    func delete(userID: UUID, clientID: String) async throws -> Bool {
        try await !db.raw(
            """
            DELETE FROM consents WHERE user_id = \(bind: Columns.id(userID)) AND client_id = \(bind: clientID) RETURNING client_id
            """
        ).all().isEmpty
    }

    static func decode(_ row: any SQLRow) throws -> ConsentRecord {
        ConsentRecord(
            userID: try row.uuid("user_id"), clientID: try row.string("client_id"),
            scopes: try Columns.decodeStrings(try row.string("scopes")), grantedAt: try row.date("granted_at"))
    }
}
