import Foundation
import GatehouseCore
import SQLKit

/// This node's secret file holds none of the secrets the database's secrets are sealed under: it
/// could neither open the signing keys nor verify what other nodes wrote.
public struct ServerSecretMismatch: Error, CustomStringConvertible {
    /// The fingerprint of the secret the database's keys were last sealed under.
    public let sealedUnder: String
    /// This node's ring, current first.
    public let held: [String]

    public var description: String {
        """
        the database's secrets do not open with this server secret: they are sealed under the server secret \
        \(sealedUnder), and this node's secret file holds \(held.joined(separator: ", ")). Give this node the secret \
        file the database was written with (a node that serves has it, and `gatehouse secret status` there shows its \
        fingerprints; a restored backup needs the secret file saved with it) at GATEHOUSE_SECRET_FILE and start again. \
        See "Rotating the server secret" in docs/operations.md.
        """
    }
}

/// The stable keys' row in `cluster_settings`: sealed, with the fingerprint of the secret that sealed
/// them (so a node holding another secret can say which it lacks).
struct StableKeysRecord: Codable {
    static let name = "stable_keys"
    var sealedUnder: String
    var sealed: String

    enum CodingKeys: String, CodingKey {
        case sealedUnder = "sealed_under"
        case sealed
    }
}

extension SQLPersistence {
    /// The ring with the database's stable keys (``StableSecretKeys``). The first node stores the
    /// keys its data was made with so far; every later start opens them, and a ring that cannot is
    /// refused with ``ServerSecretMismatch``, before anything else could fail less clearly.
    public func adoptStableKeys(_ secret: ServerSecret, now: Date) async throws -> ServerSecret {
        let fresh = StableKeysRecord(sealedUnder: secret.fingerprints[0], sealed: try secret.sealStable(secret.initialStableKeys))
        let stored: StableKeysRecord = try await transactionOnDatabase { db in
            // Two first nodes starting at once: one insert wins, both use its keys.
            let inserted =
                try await db.raw(
                    """
                    INSERT INTO cluster_settings (name, value, updated_at)
                    VALUES (\(bind: StableKeysRecord.name), \(bind: try Columns.json(fresh)), \(bind: Columns.millis(now)))
                    ON CONFLICT (name) DO NOTHING RETURNING name
                    """
                ).first() != nil
            if inserted { return fresh }
            guard let row = try await db.raw("SELECT value FROM cluster_settings WHERE name = \(bind: StableKeysRecord.name)").first()
            else { return fresh }
            return try Columns.decodeJSON(StableKeysRecord.self, try row.string("value"))
        }
        guard let keys = try? secret.openStable(stored.sealed) else {
            throw ServerSecretMismatch(sealedUnder: stored.sealedUnder, held: secret.fingerprints)
        }
        return secret.adopting(keys)
    }
}
