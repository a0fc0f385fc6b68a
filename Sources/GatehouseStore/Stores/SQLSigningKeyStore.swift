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

    func retire(algorithm: String, except kid: String, at: Date, publishUntil: Date) async throws {
        try await db.raw(
            """
            UPDATE signing_keys SET retired_at = \(bind: Columns.millis(at)), publish_until = \(bind: Columns.millis(publishUntil))
            WHERE kid <> \(bind: kid) AND algorithm = \(bind: algorithm) AND retired_at IS NULL
            """
        ).run()
    }

    func revoke(kid: String, at: Date) async throws -> Bool {
        let now = Columns.millis(at)
        return try await !db.raw(
            """
            UPDATE signing_keys SET retired_at = COALESCE(retired_at, \(bind: now)), publish_until = \(bind: now)
            WHERE kid = \(bind: kid) AND (publish_until IS NULL OR publish_until > \(bind: now)) RETURNING kid
            """
        ).all().isEmpty
    }
}
