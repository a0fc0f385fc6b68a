import Foundation
import GatehouseCore
import SQLKit

struct SQLOneTimeCodeStore: OneTimeCodeStore {
    let db: any SQLDatabase

    private static let columns = """
        id, purpose, identifier, client_id, user_id, code_hash, token_hash, attempts, max_attempts, data,
        created_at, expires_at, consumed_at
        """

    func insert(_ c: OneTimeCodeRecord) async throws {
        try await db.raw(
            """
            INSERT INTO one_time_codes (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(c.id)), \(bind: c.purpose.rawValue), \(bind: c.identifier), \(bind: c.clientID),
                    \(bind: c.userID.map(Columns.id)), \(bind: c.codeHash), \(bind: c.tokenHash), \(bind: c.attempts),
                    \(bind: c.maxAttempts), \(bind: c.data), \(bind: Columns.millis(c.createdAt)),
                    \(bind: Columns.millis(c.expiresAt)), \(bind: Columns.millis(c.consumedAt)))
            """
        ).run()
    }

    func invalidate(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String, at: Date) async throws {
        try await db.raw(
            """
            UPDATE one_time_codes SET consumed_at = \(bind: Columns.millis(at))
            WHERE purpose = \(bind: purpose.rawValue) AND identifier = \(bind: identifier)
              AND client_id = \(bind: clientID) AND consumed_at IS NULL
            """
        ).run()
    }

    func findOpen(
        purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String
    ) async throws
        -> OneTimeCodeRecord?
    {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM one_time_codes
            WHERE purpose = \(bind: purpose.rawValue) AND identifier = \(bind: identifier)
              AND client_id = \(bind: clientID) AND consumed_at IS NULL AND code_hash IS NOT NULL
            ORDER BY created_at DESC LIMIT 1
            """
        ).first().map(Self.decode)
    }

    func find(tokenHash: String) async throws -> OneTimeCodeRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM one_time_codes WHERE token_hash = \(bind: tokenHash)")
            .first().map(Self.decode)
    }

    func recordAttempt(id: UUID) async throws -> Int? {
        try await db.raw(
            """
            UPDATE one_time_codes SET attempts = attempts + 1
            WHERE id = \(bind: Columns.id(id)) AND consumed_at IS NULL AND attempts < max_attempts
            RETURNING attempts
            """
        ).first()?.int("attempts")
    }

    func consume(id: UUID, at: Date) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE one_time_codes SET consumed_at = \(bind: Columns.millis(at))
            WHERE id = \(bind: Columns.id(id)) AND consumed_at IS NULL RETURNING id
            """
        ).all().isEmpty
    }

    static func decode(_ row: any SQLRow) throws -> OneTimeCodeRecord {
        OneTimeCodeRecord(
            id: try row.uuid("id"), purpose: .init(rawValue: try row.string("purpose")),
            identifier: try row.string("identifier"), clientID: try row.string("client_id"),
            userID: try row.optionalUUID("user_id"), codeHash: try row.optionalString("code_hash"),
            tokenHash: try row.optionalString("token_hash"), attempts: try row.int("attempts"),
            maxAttempts: try row.int("max_attempts"), data: try row.optionalString("data"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            consumedAt: try row.optionalDate("consumed_at"))
    }
}
