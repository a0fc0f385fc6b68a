import Foundation
import GatehouseCore
import SQLKit

struct SQLOutboxStore: OutboxStore {
    let db: any SQLDatabase
    let dialect: Dialect

    private static let columns = """
        id, kind, channel, recipient, locale, payload, status, attempts, created_at, due_at, lease_until,
        last_error, sent_at
        """

    func enqueue(_ m: OutboxMessage) async throws {
        try await db.raw(
            """
            INSERT INTO outbox (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(m.id)), \(bind: m.kind), \(bind: m.channel.rawValue), \(bind: m.recipient),
                    \(bind: m.locale), \(bind: m.sealedPayload), \(bind: m.status.rawValue), \(bind: m.attempts),
                    \(bind: Columns.millis(m.createdAt)), \(bind: Columns.millis(m.dueAt)),
                    \(bind: Columns.millis(m.leaseUntil)), \(bind: m.lastError), \(bind: Columns.millis(m.sentAt)))
            """
        ).run()
    }

    func claimDue(now: Date, leaseUntil: Date, limit: Int, channels: Set<OutboxMessage.Channel>) async throws -> [OutboxMessage] {
        guard !channels.isEmpty else { return [] }
        let nowMs = Columns.millis(now)
        // A message whose lease ran out (its node died mid-send) is due again: at-least-once delivery.
        return try await db.raw(
            """
            UPDATE outbox SET status = 'sending', lease_until = \(bind: Columns.millis(leaseUntil)), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM outbox
                WHERE ((status = 'pending' AND due_at <= \(bind: nowMs)) OR (status = 'sending' AND lease_until <= \(bind: nowMs)))
                    AND channel IN (\(binds: channels.map(\.rawValue).sorted()))
                ORDER BY due_at LIMIT \(bind: limit)\(unsafeRaw: dialect.skipLocked)
            )
            RETURNING \(unsafeRaw: Self.columns)
            """
        ).all().map(Self.decode)
    }

    func renewLease(ids: [UUID], until: Date) async throws {
        guard !ids.isEmpty else { return }
        try await db.raw(
            "UPDATE outbox SET lease_until = \(bind: Columns.millis(until)) WHERE status = 'sending' AND id IN (\(binds: ids.map(Columns.id)))"
        ).run()
    }

    func markSent(id: UUID, at: Date) async throws {
        // The payload may hold a one-time code: once sent, it is no longer needed at rest.
        try await db.raw(
            """
            UPDATE outbox SET status = 'sent', sent_at = \(bind: Columns.millis(at)), lease_until = NULL, payload = ''
            WHERE id = \(bind: Columns.id(id))
            """
        ).run()
    }

    func markFailed(id: UUID, error: String, retryAt: Date?, at: Date) async throws {
        let status = retryAt == nil ? OutboxMessage.Status.dead : .pending
        try await db.raw(
            """
            UPDATE outbox SET status = \(bind: status.rawValue), last_error = \(bind: String(error.prefix(1000))),
                due_at = \(bind: Columns.millis(retryAt ?? at)), lease_until = NULL
            WHERE id = \(bind: Columns.id(id))
            """
        ).run()
    }

    func list(status: OutboxMessage.Status?, channel: OutboxMessage.Channel?, limit: Int) async throws -> [OutboxMessage] {
        let rows: [any SQLRow]
        switch (status, channel) {
        case (nil, nil):
            rows = try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM outbox ORDER BY created_at DESC LIMIT \(bind: limit)").all()
        case (let status?, nil):
            rows = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM outbox WHERE status = \(bind: status.rawValue)
                ORDER BY created_at DESC LIMIT \(bind: limit)
                """
            ).all()
        case (nil, let channel?):
            rows = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM outbox WHERE channel = \(bind: channel.rawValue)
                ORDER BY created_at DESC LIMIT \(bind: limit)
                """
            ).all()
        case (let status?, let channel?):
            rows = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM outbox WHERE status = \(bind: status.rawValue) AND channel = \(bind: channel.rawValue)
                ORDER BY created_at DESC LIMIT \(bind: limit)
                """
            ).all()
        }
        return try rows.map(Self.decode)
    }

    func find(id: UUID) async throws -> OutboxMessage? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM outbox WHERE id = \(bind: Columns.id(id))")
            .first().map(Self.decode)
    }

    func retry(id: UUID, at: Date) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE outbox SET status = 'pending', due_at = \(bind: Columns.millis(at)), attempts = 0, lease_until = NULL
            WHERE id = \(bind: Columns.id(id)) AND status IN ('dead', 'pending') RETURNING id
            """
        ).all().isEmpty
    }

    static func decode(_ row: any SQLRow) throws -> OutboxMessage {
        guard let channel = OutboxMessage.Channel(rawValue: try row.string("channel")),
            let status = OutboxMessage.Status(rawValue: try row.string("status"))
        else { throw StoreDecodingError.badValue("outbox") }
        return OutboxMessage(
            id: try row.uuid("id"), kind: try row.string("kind"), channel: channel, recipient: try row.string("recipient"),
            locale: try row.optionalString("locale"), sealedPayload: try row.string("payload"), status: status,
            attempts: try row.int("attempts"), createdAt: try row.date("created_at"), dueAt: try row.date("due_at"),
            leaseUntil: try row.optionalDate("lease_until"), lastError: try row.optionalString("last_error"),
            sentAt: try row.optionalDate("sent_at"))
    }
}
