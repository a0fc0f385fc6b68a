import Foundation
import GatehouseCore
import SQLKit

struct SQLDeviceAuthorizationStore: DeviceAuthorizationStore {
    let db: any SQLDatabase

    static let columns = """
        device_code_hash, user_code_hash, client_id, scopes, status, sealed_code, sealed_verifier, created_at, expires_at,
        interval_seconds, polled_at
        """

    func insert(_ r: DeviceAuthorizationRecord) async throws {
        try await db.raw(
            """
            INSERT INTO device_authorizations (\(unsafeRaw: Self.columns))
            VALUES (\(bind: r.deviceCodeHash), \(bind: r.userCodeHash), \(bind: r.clientID), \(bind: try Columns.json(r.scopes)),
                    \(bind: r.status.rawValue), \(bind: r.sealedCode), \(bind: r.sealedVerifier), \(bind: Columns.millis(r.createdAt)),
                    \(bind: Columns.millis(r.expiresAt)), \(bind: r.interval), \(bind: Columns.millis(r.polledAt)))
            """
        ).run()
    }

    func find(deviceCodeHash: String) async throws -> DeviceAuthorizationRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM device_authorizations WHERE device_code_hash = \(bind: deviceCodeHash)")
            .first().map(Self.decode)
    }

    func find(userCodeHash: String) async throws -> DeviceAuthorizationRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM device_authorizations WHERE user_code_hash = \(bind: userCodeHash)")
            .first().map(Self.decode)
    }

    func polled(deviceCodeHash: String, at: Date, interval: Int) async throws {
        try await db.raw(
            """
            UPDATE device_authorizations SET polled_at = \(bind: Columns.millis(at)), interval_seconds = \(bind: interval)
            WHERE device_code_hash = \(bind: deviceCodeHash)
            """
        ).run()
    }

    func decide(userCodeHash: String, status: DeviceAuthorizationRecord.Status, sealedCode: String?) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE device_authorizations SET status = \(bind: status.rawValue), sealed_code = \(bind: sealedCode)
            WHERE user_code_hash = \(bind: userCodeHash) AND status = 'pending' RETURNING device_code_hash
            """
        ).all().isEmpty
    }

    func delete(deviceCodeHash: String) async throws -> Bool {
        try await !db.raw(
            "DELETE FROM device_authorizations WHERE device_code_hash = \(bind: deviceCodeHash) RETURNING device_code_hash"
        ).all().isEmpty
    }

    static func decode(_ row: any SQLRow) throws -> DeviceAuthorizationRecord {
        DeviceAuthorizationRecord(
            deviceCodeHash: try row.string("device_code_hash"), userCodeHash: try row.string("user_code_hash"),
            clientID: try row.string("client_id"), scopes: try Columns.decodeStrings(try row.string("scopes")),
            status: DeviceAuthorizationRecord.Status(rawValue: try row.string("status")) ?? .denied,
            sealedCode: try row.optionalString("sealed_code"), sealedVerifier: try row.string("sealed_verifier"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"), interval: try row.int("interval_seconds"),
            polledAt: try row.optionalDate("polled_at"))
    }
}
