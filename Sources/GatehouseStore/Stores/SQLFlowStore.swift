import Foundation
import GatehouseCore
import SQLKit

struct SQLFlowStore: FlowStore {
    let db: any SQLDatabase

    private static let columns = """
        id, kind, client_id, redirect_uri, code_challenge, code_challenge_method, nonce, state, csrf_hash, step,
        user_id, browser_session_id, data, created_at, updated_at, expires_at, consumed_at
        """

    func insert(_ f: FlowRecord) async throws {
        try await db.raw(
            """
            INSERT INTO flows (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(f.id)), \(bind: f.kind.rawValue), \(bind: f.clientID), \(bind: f.redirectURI),
                    \(bind: f.pkce?.challenge), \(bind: f.pkce?.method), \(bind: f.nonce), \(bind: f.state), \(bind: f.csrfHash),
                    \(bind: f.step.rawValue), \(bind: f.userID.map(Columns.id)), \(bind: f.browserSessionID.map(Columns.id)),
                    \(bind: f.data), \(bind: Columns.millis(f.createdAt)), \(bind: Columns.millis(f.updatedAt)),
                    \(bind: Columns.millis(f.expiresAt)), \(bind: Columns.millis(f.consumedAt)))
            """
        ).run()
    }

    func find(id: UUID) async throws -> FlowRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM flows WHERE id = \(bind: Columns.id(id))").first().map(Self.decode)
    }

    func advance(id: UUID, from step: FlowStep, to next: FlowStep, userID: UUID?, data: String?, at: Date) async throws -> Bool {
        let nowMs = Columns.millis(at)
        return
            !(try await db.raw(
                """
                UPDATE flows SET step = \(bind: next.rawValue), user_id = COALESCE(\(bind: userID.map(Columns.id)), user_id),
                    data = COALESCE(\(bind: data), data), updated_at = \(bind: nowMs)
                WHERE id = \(bind: Columns.id(id)) AND step = \(bind: step.rawValue) AND consumed_at IS NULL
                  AND expires_at > \(bind: nowMs)
                RETURNING id
                """
            ).all().isEmpty)
    }

    func consume(id: UUID, at: Date) async throws -> FlowRecord? {
        let nowMs = Columns.millis(at)
        return try await db.raw(
            """
            UPDATE flows SET consumed_at = \(bind: nowMs), updated_at = \(bind: nowMs)
            WHERE id = \(bind: Columns.id(id)) AND consumed_at IS NULL AND expires_at > \(bind: nowMs)
            RETURNING \(unsafeRaw: Self.columns)
            """
        ).first().map(Self.decode)
    }

    static func decode(_ row: any SQLRow) throws -> FlowRecord {
        var pkce: PKCEChallenge?
        if let challenge = try row.optionalString("code_challenge") {
            pkce = PKCEChallenge(challenge: challenge, method: try row.optionalString("code_challenge_method") ?? "S256")
        }
        return FlowRecord(
            id: try row.uuid("id"), kind: FlowKind(rawValue: try row.string("kind")), clientID: try row.string("client_id"),
            redirectURI: try row.optionalString("redirect_uri"), pkce: pkce, nonce: try row.optionalString("nonce"),
            state: try row.optionalString("state"), csrfHash: try row.string("csrf_hash"),
            step: FlowStep(rawValue: try row.string("step")), userID: try row.optionalUUID("user_id"),
            browserSessionID: try row.optionalUUID("browser_session_id"), data: try row.optionalString("data"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            expiresAt: try row.date("expires_at"), consumedAt: try row.optionalDate("consumed_at"))
    }
}
