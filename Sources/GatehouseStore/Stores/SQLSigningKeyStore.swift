import Foundation
import GatehouseCore
import SQLKit

struct SQLSigningKeyStore: SigningKeyStore {
    let db: any SQLDatabase

    func insert(_ k: SigningKeyRecord) async throws {
        try await db.raw(
            """
            INSERT INTO signing_keys (kid, algorithm, public_jwk, sealed_private_key, created_at, retired_at, publish_until)
            VALUES (\(bind: k.kid), \(bind: k.algorithm), \(bind: k.publicJWK), \(bind: k.sealedPrivateKey),
                    \(bind: Columns.millis(k.createdAt)), \(bind: Columns.millis(k.retiredAt)), \(bind: Columns.millis(k.publishUntil)))
            """
        ).run()
    }

    func listPublished(now: Date) async throws -> [SigningKeyRecord] {
        try await db.raw(
            """
            SELECT kid, algorithm, public_jwk, sealed_private_key, created_at, retired_at, publish_until
            FROM signing_keys
            WHERE retired_at IS NULL OR publish_until > \(bind: Columns.millis(now))
            ORDER BY CASE WHEN retired_at IS NULL THEN 0 ELSE 1 END, created_at DESC
            """
        ).all().map { row in
            SigningKeyRecord(
                kid: try row.string("kid"), algorithm: try row.string("algorithm"),
                publicJWK: try row.string("public_jwk"), sealedPrivateKey: try row.string("sealed_private_key"),
                createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"),
                publishUntil: try row.optionalDate("publish_until"))
        }
    }

    func retireAll(except kid: String, at: Date, publishUntil: Date) async throws {
        try await db.raw(
            """
            UPDATE signing_keys SET retired_at = \(bind: Columns.millis(at)), publish_until = \(bind: Columns.millis(publishUntil))
            WHERE kid <> \(bind: kid) AND retired_at IS NULL
            """
        ).run()
    }
}

struct SQLAttemptStore: AttemptStore {
    let db: any SQLDatabase

    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount {
        let nowMs = Columns.millis(now)
        let cutoff = Columns.millis(now.addingTimeInterval(-window))
        // One statement, so concurrent failures on several nodes never lose a count.
        let row = try await db.raw(
            """
            INSERT INTO attempt_counters (counter_key, count, window_start) VALUES (\(bind: key), 1, \(bind: nowMs))
            ON CONFLICT (counter_key) DO UPDATE SET
                count = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN 1 ELSE attempt_counters.count + 1 END,
                window_start = CASE WHEN attempt_counters.window_start <= \(bind: cutoff) THEN \(bind: nowMs) ELSE attempt_counters.window_start END
            RETURNING count, window_start
            """
        ).first()
        guard let row else { return AttemptCount(count: 1, windowStart: now) }
        return AttemptCount(count: try row.int("count"), windowStart: try row.date("window_start"))
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

    func reset(key: String) async throws {
        try await db.raw("DELETE FROM attempt_counters WHERE counter_key = \(bind: key)").run()
    }
}
