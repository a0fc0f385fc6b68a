import Foundation
import GatehouseCore
import SQLKit

/// One insert per proof: the primary key refuses a second (DO NOTHING, so a PostgreSQL transaction is
/// not aborted by the conflict).
struct SQLProofReplayStore: ProofReplayStore {
    let db: any SQLDatabase

    func claim(key: String, until: Date) async throws -> Bool {
        try await !db.raw(
            """
            INSERT INTO dpop_proofs (proof_key, expires_at) VALUES (\(bind: key), \(bind: Columns.millis(until)))
            ON CONFLICT DO NOTHING RETURNING proof_key
            """
        ).all().isEmpty
    }
}
