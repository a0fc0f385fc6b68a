import Foundation
import GatehouseCore
import SQLKit

struct SQLAgreementStore: AgreementStore {
    let db: any SQLDatabase

    func find(userID: UUID, clientID: String) async throws -> AgreementRecord? {
        guard
            let row = try await db.raw(
                """
                SELECT platform_version, client_version, accepted_at FROM agreements
                WHERE user_id = \(bind: Columns.id(userID)) AND client_id = \(bind: clientID)
                """
            ).first()
        else { return nil }
        return AgreementRecord(
            userID: userID, clientID: clientID, platformVersion: try row.optionalString("platform_version"),
            clientVersion: try row.optionalString("client_version"), acceptedAt: try row.date("accepted_at"))
    }

    func upsert(_ a: AgreementRecord) async throws {
        try await db.raw(
            """
            INSERT INTO agreements (user_id, client_id, platform_version, client_version, accepted_at)
            VALUES (\(bind: Columns.id(a.userID)), \(bind: a.clientID), \(bind: a.platformVersion), \(bind: a.clientVersion),
                    \(bind: Columns.millis(a.acceptedAt)))
            ON CONFLICT (user_id, client_id) DO UPDATE SET platform_version = excluded.platform_version,
                client_version = excluded.client_version, accepted_at = excluded.accepted_at
            """
        ).run()
    }
}
