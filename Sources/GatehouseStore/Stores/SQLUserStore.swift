import Foundation
import GatehouseAPI
import GatehouseCore
import SQLKit

struct SQLUserStore: UserStore {
    let db: any SQLDatabase

    static let columns = """
        u.id, u.email, u.email_verified, u.phone, u.phone_verified, u.profile, u.app_metadata, u.state, u.created_at,
        u.updated_at, u.last_login_at,
        (SELECT COALESCE(SUM(CASE c.type WHEN 'password' THEN 1 ELSE 1000 END), 0) FROM credentials c
         WHERE c.user_id = u.id AND c.type IN ('password', 'oidc')) AS sign_in_kinds
        """

    func insert(_ user: UserRecord) async throws {
        // ON CONFLICT DO NOTHING instead of catching the violation: on PostgreSQL an error would abort
        // the surrounding transaction.
        let inserted = try await db.raw(
            """
            INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, app_metadata, state, created_at, updated_at, last_login_at)
            VALUES (\(bind: Columns.id(user.id)), \(bind: user.email), \(bind: user.emailVerified ? 1 : 0),
                    \(bind: user.phone), \(bind: user.phoneVerified ? 1 : 0), \(bind: try Columns.json(user.profile)),
                    \(bind: try user.appMetadata.map(Columns.json)), \(bind: user.state.rawValue), \(bind: Columns.millis(user.createdAt)),
                    \(bind: Columns.millis(user.updatedAt)), \(bind: Columns.millis(user.lastLoginAt)))
            ON CONFLICT DO NOTHING RETURNING id
            """
        ).all()
        if inserted.isEmpty { throw StoreError.conflict("user") }
    }

    func find(id: UUID) async throws -> UserRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM users u WHERE u.id = \(bind: Columns.id(id))")
            .first().map(Self.decode)
    }

    func find(email: String) async throws -> UserRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM users u WHERE u.email = \(bind: email)")
            .first().map(Self.decode)
    }

    func find(phone: String) async throws -> UserRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM users u WHERE u.phone = \(bind: phone)")
            .first().map(Self.decode)
    }

    func update(_ user: UserRecord) async throws {
        try await db.raw(
            """
            UPDATE users SET email = \(bind: user.email), email_verified = \(bind: user.emailVerified ? 1 : 0),
                phone = \(bind: user.phone), phone_verified = \(bind: user.phoneVerified ? 1 : 0),
                profile = \(bind: try Columns.json(user.profile)), app_metadata = \(bind: try user.appMetadata.map(Columns.json)),
                state = \(bind: user.state.rawValue),
                updated_at = \(bind: Columns.millis(user.updatedAt)), last_login_at = \(bind: Columns.millis(user.lastLoginAt))
            WHERE id = \(bind: Columns.id(user.id))
            """
        ).run()
    }

    func recordLogin(id: UUID, at: Date) async throws {
        try await db.raw(
            "UPDATE users SET last_login_at = \(bind: Columns.millis(at)) WHERE id = \(bind: Columns.id(id))"
        ).run()
    }

    func count() async throws -> Int {
        try await db.raw("SELECT COUNT(*) AS n FROM users").first()?.int("n") ?? 0
    }

    static func decode(_ row: any SQLRow) throws -> UserRecord {
        var user = UserRecord(
            id: try row.uuid("id"), email: try row.optionalString("email"), emailVerified: try row.bool("email_verified"),
            phone: try row.optionalString("phone"), phoneVerified: try row.bool("phone_verified"),
            profile: try Columns.decodeJSON(Profile.self, try row.string("profile")),
            appMetadata: try row.optionalString("app_metadata").map { try Columns.decodeJSON([String: JSONValue].self, $0) },
            state: UserState(rawValue: try row.string("state")), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"), lastLoginAt: try row.optionalDate("last_login_at"),
            hasPassword: false)
        // One index range for both flags: 1 per password credential, 1000 per identity.
        let kinds = try row.int("sign_in_kinds")
        user.hasPassword = kinds % 1000 > 0
        user.hasIdentities = kinds >= 1000
        return user
    }
}
