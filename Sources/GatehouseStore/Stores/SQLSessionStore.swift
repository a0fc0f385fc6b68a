import Foundation
import GatehouseAPI
import GatehouseCore
import SQLKit

struct SQLSessionStore: SessionStore {
    let db: any SQLDatabase

    static let columns = """
        id, user_id, client_id, amr, scopes, user_agent, ip_address, created_at, last_used_at, expires_at,
        revoked_at, revoke_reason, credential_id, browser_session_id, auth_time, claims, dpop_jkt,
        refresh_generation, refresh_rotated_at, refresh_expires_at, refresh_token_hash
        """

    func insert(_ s: SessionRecord) async throws {
        try await db.raw(
            """
            INSERT INTO sessions (\(unsafeRaw: Self.columns))
            VALUES (\(bind: Columns.id(s.id)), \(bind: Columns.id(s.userID)), \(bind: s.clientID),
                    \(bind: try Columns.json(s.amr)), \(bind: try Columns.json(s.scopes)), \(bind: s.userAgent),
                    \(bind: s.ipAddress), \(bind: Columns.millis(s.createdAt)), \(bind: Columns.millis(s.lastUsedAt)),
                    \(bind: Columns.millis(s.expiresAt)), \(bind: Columns.millis(s.revokedAt)), \(bind: s.revokeReason),
                    \(bind: s.credentialID), \(bind: s.browserSessionID.map(Columns.id)),
                    \(bind: Columns.millis(s.authTime)), \(bind: try s.requestedClaims.map(Columns.json)), \(bind: s.dpopJKT),
                    \(bind: s.refreshChain?.generation), \(bind: Columns.millis(s.refreshChain?.rotatedAt)),
                    \(bind: Columns.millis(s.refreshChain?.expiresAt)), \(bind: s.refreshChain?.tokenHash))
            """
        ).run()
    }

    func find(id: UUID) async throws -> SessionRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM sessions WHERE id = \(bind: Columns.id(id))")
            .first().map(Self.decode)
    }

    func findWithUser(id: UUID) async throws -> (session: SessionRecord, user: UserRecord)? {
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.prefixed), \(unsafeRaw: SQLUserStore.aliased)
                FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = \(bind: Columns.id(id))
                """
            ).first()
        else { return nil }
        return (try Self.decode(row), try SQLUserStore.decode(row, prefix: "u_"))
    }

    func findForRefresh(id: UUID) async throws -> (session: SessionRecord, userActive: Bool)? {
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.prefixed), u.state AS user_state
                FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = \(bind: Columns.id(id))
                """
            ).first()
        else { return nil }
        return (try Self.decode(row), try row.string("user_state") == UserState.active.rawValue)
    }

    func advanceRefreshChain(_ claim: RefreshChainClaim) async throws -> SessionRecord? {
        let now = Columns.millis(claim.now)
        var query: SQLQueryString = """
            UPDATE sessions SET refresh_generation = \(bind: claim.next), refresh_rotated_at = \(bind: now),
                refresh_expires_at = \(bind: Columns.millis(claim.expiresAt)), refresh_token_hash = \(bind: claim.nextHash),
                last_used_at = \(bind: now)
            """
        if let bind = claim.dpop?.bind { query += ", dpop_jkt = COALESCE(dpop_jkt, \(bind: bind))" }
        query += """
             WHERE id = \(bind: Columns.id(claim.sessionID)) AND client_id = \(bind: claim.clientID)
              AND revoked_at IS NULL AND expires_at > \(bind: now)
            """
        if let from = claim.from {
            query += """
                 AND refresh_generation = \(bind: from.generation) AND refresh_token_hash = \(bind: from.tokenHash)
                 AND refresh_expires_at > \(bind: now)
                """
        } else {
            query += " AND refresh_generation IS NULL"
        }
        if let dpop = claim.dpop {
            if let match = dpop.match {
                query += " AND (dpop_jkt IS NULL OR dpop_jkt = \(bind: match))"
            } else {
                query += " AND dpop_jkt IS NULL"
            }
        }
        query += """
             AND EXISTS (SELECT 1 FROM users u WHERE u.id = sessions.user_id AND u.state = \(bind: UserState.active.rawValue))
            RETURNING \(unsafeRaw: Self.columns)
            """
        return try await db.raw(query).first().map(Self.decode)
    }

    func bindDPoP(id: UUID, jkt: String) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE sessions SET dpop_jkt = \(bind: jkt) WHERE id = \(bind: Columns.id(id)) AND (dpop_jkt IS NULL OR dpop_jkt = \(bind: jkt)) RETURNING id
            """
        ).all().isEmpty
    }

    func listLive(userID: UUID, now: Date) async throws -> [SessionRecord] {
        // A session on token rows is used when its refresh token rotates; the newest token's creation is
        // that time (those refreshes write no session row, to keep them at one write).
        // A chain's refresh writes last_used_at itself.
        let columns = Self.columns.replacingOccurrences(
            of: "last_used_at",
            with: """
                CASE WHEN refresh_generation IS NULL
                THEN COALESCE((SELECT MAX(r.created_at) FROM refresh_tokens r WHERE r.session_id = sessions.id), last_used_at)
                ELSE last_used_at END AS last_used_at
                """)
        return try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM sessions
            WHERE user_id = \(bind: Columns.id(userID)) AND revoked_at IS NULL AND expires_at > \(bind: Columns.millis(now))
            ORDER BY created_at DESC LIMIT 500
            """
        ).all().map(Self.decode)
    }

    func revoke(id: UUID, at: Date, reason: RevokeReason) async throws -> Bool {
        try await !db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE id = \(bind: Columns.id(id)) AND revoked_at IS NULL RETURNING id
            """
        ).all().isEmpty
    }

    func revokeAll(clientID: String, at: Date, reason: RevokeReason) async throws -> Int {
        try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE client_id = \(bind: clientID) AND revoked_at IS NULL RETURNING id
            """
        ).all().count
    }

    func revokeAll(credentialID: String, at: Date, reason: RevokeReason) async throws -> Int {
        try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE credential_id = \(bind: credentialID) AND revoked_at IS NULL RETURNING id
            """
        ).all().count
    }

    func revokeAll(browserSessionID: UUID, at: Date, reason: RevokeReason) async throws -> Int {
        try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE browser_session_id = \(bind: Columns.id(browserSessionID)) AND revoked_at IS NULL RETURNING id
            """
        ).all().count
    }

    func revokeAll(userID: UUID, clientID: String, at: Date, reason: RevokeReason) async throws -> Int {
        try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE user_id = \(bind: Columns.id(userID)) AND client_id = \(bind: clientID) AND revoked_at IS NULL RETURNING id
            """
        ).all().count
    }

    func revokeAll(userID: UUID, except: UUID?, at: Date, reason: RevokeReason) async throws -> Int {
        try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: Columns.millis(at)), revoke_reason = \(bind: reason.rawValue)
            WHERE user_id = \(bind: Columns.id(userID)) AND revoked_at IS NULL
              AND id <> \(bind: except.map(Columns.id) ?? "") RETURNING id
            """
        ).all().count
    }

    func replaceAnonymousAMR(userID: UUID, with amr: [String]) async throws {
        try await db.raw(
            """
            UPDATE sessions SET amr = \(bind: try Columns.json(amr))
            WHERE user_id = \(bind: Columns.id(userID)) AND amr = \(bind: try Columns.json([AuthenticationMethod.anonymous]))
            """
        ).run()
    }

    static func decode(_ row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.uuid("id"), userID: try row.uuid("user_id"), clientID: try row.string("client_id"),
            amr: try Columns.decodeStrings(try row.string("amr")),
            scopes: try Columns.decodeStrings(try row.string("scopes")),
            userAgent: try row.optionalString("user_agent"), ipAddress: try row.optionalString("ip_address"),
            createdAt: try row.date("created_at"), lastUsedAt: try row.date("last_used_at"),
            expiresAt: try row.date("expires_at"), revokedAt: try row.optionalDate("revoked_at"),
            revokeReason: try row.optionalString("revoke_reason"), credentialID: try row.optionalString("credential_id"),
            browserSessionID: try row.optionalString("browser_session_id").flatMap(UUID.init(uuidString:)),
            authTime: try row.optionalDate("auth_time"),
            requestedClaims: try row.optionalString("claims").map { try Columns.decodeJSON(RequestedClaims.self, $0) },
            dpopJKT: try row.optionalString("dpop_jkt"),
            refreshChain: try row.optionalInt("refresh_generation").map { generation in
                RefreshChainState(
                    generation: generation, rotatedAt: try row.date("refresh_rotated_at"),
                    expiresAt: try row.date("refresh_expires_at"), tokenHash: try row.string("refresh_token_hash"))
            })
    }

    /// ``columns`` of the session aliased `s`, under their own names so ``decode(_:)`` reads them.
    static let prefixed = columns.split(separator: ",")
        .map { "s." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")
}

struct SQLRefreshTokenStore: RefreshTokenStore {
    let db: any SQLDatabase

    func insert(_ t: RefreshTokenRecord) async throws {
        try await db.raw(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, parent_hash, created_at, expires_at)
            VALUES (\(bind: t.tokenHash), \(bind: Columns.id(t.sessionID)), \(bind: t.parentHash),
                    \(bind: Columns.millis(t.createdAt)), \(bind: Columns.millis(t.expiresAt)))
            """
        ).run()
    }

    func find(hash: String) async throws -> RefreshTokenRecord? {
        guard
            let row = try await db.raw(
                """
                SELECT t.token_hash, t.session_id, t.parent_hash, t.created_at, t.expires_at, \(unsafeRaw: Self.rotatedAt)
                FROM refresh_tokens t WHERE t.token_hash = \(bind: hash)
                """
            ).first()
        else { return nil }
        return RefreshTokenRecord(
            tokenHash: try row.string("token_hash"), sessionID: try row.uuid("session_id"),
            parentHash: try row.optionalString("parent_hash"), createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"), rotatedAt: try row.optionalDate("rotated_at"))
    }

    func findWithSession(hash: String) async throws -> (token: RefreshTokenRecord, session: SessionRecord, userActive: Bool)? {
        // The token's own dates are aliased: the session's keep their names.
        let sessionColumns = SQLSessionStore.prefixed
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: sessionColumns), t.token_hash, t.parent_hash, t.created_at AS token_created_at,
                       t.expires_at AS token_expires_at, \(unsafeRaw: Self.rotatedAt), u.state AS user_state
                FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id
                WHERE t.token_hash = \(bind: hash)
                """
            ).first()
        else { return nil }
        let session = try SQLSessionStore.decode(row)
        let token = RefreshTokenRecord(
            tokenHash: try row.string("token_hash"), sessionID: session.id,
            parentHash: try row.optionalString("parent_hash"), createdAt: try row.date("token_created_at"),
            expiresAt: try row.date("token_expires_at"), rotatedAt: try row.optionalDate("rotated_at"))
        return (token, session, try row.string("user_state") == UserState.active.rawValue)
    }

    func insertSuccessor(_ t: RefreshTokenRecord) async throws -> Bool {
        // The unique index on parent_hash (and the derived token_hash) makes a second successor a
        // conflict: DO NOTHING rather than an error, which would abort a PostgreSQL transaction.
        try await !db.raw(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, parent_hash, created_at, expires_at)
            VALUES (\(bind: t.tokenHash), \(bind: Columns.id(t.sessionID)), \(bind: t.parentHash),
                    \(bind: Columns.millis(t.createdAt)), \(bind: Columns.millis(t.expiresAt)))
            ON CONFLICT DO NOTHING RETURNING token_hash
            """
        ).all().isEmpty
    }

    /// A token was rotated when its successor was created.
    private static let rotatedAt =
        "(SELECT c.created_at FROM refresh_tokens c WHERE c.parent_hash = t.token_hash) AS rotated_at"
}
