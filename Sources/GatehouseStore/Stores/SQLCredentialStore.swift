import Foundation
import GatehouseCore
import SQLKit

struct SQLCredentialStore: CredentialStore {
    let db: any SQLDatabase

    private static let columns = """
        c.id, c.user_id, c.type, c.config, c.config_version, c.failure_count, c.locked_until, c.created_at, c.updated_at
        """

    func insert(_ c: CredentialRecord) async throws {
        try await db.raw(
            """
            INSERT INTO credentials (id, user_id, type, config, config_version, failure_count, locked_until, created_at, updated_at)
            VALUES (\(bind: c.id), \(bind: Columns.id(c.userID)), \(bind: c.type.rawValue), \(bind: c.config),
                    \(bind: c.configVersion), \(bind: c.failureCount), \(bind: Columns.millis(c.lockedUntil)),
                    \(bind: Columns.millis(c.createdAt)), \(bind: Columns.millis(c.updatedAt)))
            """
        ).run()
        try await insertIdentifiers(c)
    }

    func update(_ c: CredentialRecord) async throws {
        try await db.raw(
            """
            UPDATE credentials SET config = \(bind: c.config), config_version = \(bind: c.configVersion),
                updated_at = \(bind: Columns.millis(c.updatedAt))
            WHERE id = \(bind: c.id)
            """
        ).run()
        let current = try await identifiers(of: c.id)
        guard Set(current) != Set(c.identifiers) else { return }
        try await db.raw("DELETE FROM credential_identifiers WHERE credential_id = \(bind: c.id)").run()
        try await insertIdentifiers(c)
    }

    /// ON CONFLICT DO NOTHING and a count instead of catching the violation: on PostgreSQL an error
    /// would abort the surrounding transaction. The caller's transaction rolls back on the throw.
    private func insertIdentifiers(_ c: CredentialRecord) async throws {
        for identifier in Set(c.identifiers) {
            let inserted = try await db.raw(
                """
                INSERT INTO credential_identifiers (type, identifier, credential_id)
                VALUES (\(bind: c.type.rawValue), \(bind: identifier), \(bind: c.id))
                ON CONFLICT DO NOTHING RETURNING credential_id
                """
            ).all()
            if inserted.isEmpty { throw StoreError.conflict("credential identifier") }
        }
    }

    func find(id: String) async throws -> CredentialRecord? {
        guard let row = try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM credentials c WHERE c.id = \(bind: id)").first()
        else { return nil }
        return try await decode(row)
    }

    func find(type: CredentialType, identifier: String) async throws -> CredentialRecord? {
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM credential_identifiers i JOIN credentials c ON c.id = i.credential_id
                WHERE i.type = \(bind: type.rawValue) AND i.identifier = \(bind: identifier)
                """
            ).first()
        else { return nil }
        return try await decode(row)
    }

    func list(userID: UUID, type: CredentialType?) async throws -> [CredentialRecord] {
        let rows: [any SQLRow]
        if let type {
            rows = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM credentials c
                WHERE c.user_id = \(bind: Columns.id(userID)) AND c.type = \(bind: type.rawValue) ORDER BY c.created_at, c.id
                """
            ).all()
        } else {
            rows = try await db.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM credentials c WHERE c.user_id = \(bind: Columns.id(userID)) ORDER BY c.created_at, c.id"
            ).all()
        }
        var out: [CredentialRecord] = []
        for row in rows { out.append(try await decode(row)) }
        return out
    }

    func list(userID: UUID, types: [CredentialType]) async throws -> [CredentialRecord] {
        guard !types.isEmpty else { return [] }
        let rows = try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM credentials c
            WHERE c.user_id = \(bind: Columns.id(userID)) AND c.type IN (\(binds: types.map(\.rawValue))) ORDER BY c.created_at, c.id
            """
        ).all()
        var out: [CredentialRecord] = []
        for row in rows { out.append(try await decode(row)) }
        return out
    }

    func count(userID: UUID, type: CredentialType) async throws -> Int {
        let row = try await db.raw(
            "SELECT COUNT(*) AS n FROM credentials WHERE user_id = \(bind: Columns.id(userID)) AND type = \(bind: type.rawValue)"
        ).first()
        return try row?.int("n") ?? 0
    }

    func delete(id: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM credentials WHERE id = \(bind: id) RETURNING id").all().isEmpty)
    }

    func deleteAll(userID: UUID, type: CredentialType) async throws -> Int {
        try await db.raw(
            "DELETE FROM credentials WHERE user_id = \(bind: Columns.id(userID)) AND type = \(bind: type.rawValue) RETURNING id"
        ).all().count
    }

    func recordFailure(id: String, at: Date) async throws -> Int? {
        try await db.raw(
            """
            UPDATE credentials SET failure_count = failure_count + 1, updated_at = \(bind: Columns.millis(at))
            WHERE id = \(bind: id) RETURNING failure_count
            """
        ).first()?.int("failure_count")
    }

    func resetFailures(id: String) async throws -> Bool {
        try await !db.raw(
            "UPDATE credentials SET failure_count = 0, locked_until = NULL WHERE id = \(bind: id) RETURNING id"
        ).all().isEmpty
    }

    private func identifiers(of id: String) async throws -> [String] {
        try await db.raw(
            "SELECT identifier FROM credential_identifiers WHERE credential_id = \(bind: id) ORDER BY identifier"
        ).all().map { try $0.string("identifier") }
    }

    private func decode(_ row: any SQLRow) async throws -> CredentialRecord {
        let id = try row.string("id")
        return CredentialRecord(
            id: id, userID: try row.uuid("user_id"), type: CredentialType(rawValue: try row.string("type")),
            identifiers: try await identifiers(of: id), config: try row.string("config"),
            configVersion: try row.int("config_version"), failureCount: try row.int("failure_count"),
            lockedUntil: try row.optionalDate("locked_until"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }
}
