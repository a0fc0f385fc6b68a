import Foundation
import GatehouseCore
import SQLKit

struct SQLClientStore: ClientStore {
    let db: any SQLDatabase

    private static let columns =
        "id, name, kind, secret_hash, redirect_uris, scopes, settings, is_default, created_at, updated_at"

    func insert(_ client: ClientRecord) async throws {
        let inserted = try await db.raw(
            """
            INSERT INTO clients (\(unsafeRaw: Self.columns))
            VALUES (\(bind: client.id), \(bind: client.name), \(bind: client.kind.rawValue), \(bind: client.secretHash),
                    \(bind: try Columns.json(client.redirectURIs)), \(bind: try Columns.json(client.scopes)),
                    \(bind: try Columns.json(client.settings)), \(bind: client.isDefault ? 1 : 0),
                    \(bind: Columns.millis(client.createdAt)), \(bind: Columns.millis(client.updatedAt)))
            ON CONFLICT DO NOTHING RETURNING id
            """
        ).all()
        if inserted.isEmpty { throw StoreError.conflict("client") }
    }

    func find(id: String) async throws -> ClientRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM clients WHERE id = \(bind: id)").first().map(Self.decode)
    }

    func findDefault() async throws -> ClientRecord? {
        try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM clients WHERE is_default = 1 ORDER BY created_at LIMIT 1"
        ).first().map(Self.decode)
    }

    func list() async throws -> [ClientRecord] {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM clients ORDER BY created_at, id").all().map(Self.decode)
    }

    func update(_ client: ClientRecord) async throws {
        try await db.raw(
            """
            UPDATE clients SET name = \(bind: client.name), kind = \(bind: client.kind.rawValue),
                secret_hash = \(bind: client.secretHash), redirect_uris = \(bind: try Columns.json(client.redirectURIs)),
                scopes = \(bind: try Columns.json(client.scopes)), settings = \(bind: try Columns.json(client.settings)),
                is_default = \(bind: client.isDefault ? 1 : 0), updated_at = \(bind: Columns.millis(client.updatedAt))
            WHERE id = \(bind: client.id)
            """
        ).run()
    }

    func delete(id: String) async throws -> Bool {
        try await !db.raw("DELETE FROM clients WHERE id = \(bind: id) RETURNING id").all().isEmpty
    }

    static func decode(_ row: any SQLRow) throws -> ClientRecord {
        guard let kind = ClientRecord.Kind(rawValue: try row.string("kind")) else {
            throw StoreDecodingError.badValue("clients.kind")
        }
        return ClientRecord(
            id: try row.string("id"), name: try row.string("name"), kind: kind,
            secretHash: try row.optionalString("secret_hash"),
            redirectURIs: try Columns.decodeJSON([String].self, try row.string("redirect_uris")),
            scopes: try Columns.decodeJSON([String].self, try row.string("scopes")),
            settings: try Columns.decodeJSON(ClientSettings.self, try row.string("settings")),
            isDefault: try row.bool("is_default"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }
}
