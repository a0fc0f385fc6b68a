import Foundation
import GatehouseAPI
import GatehouseCore
import SQLKit

struct SQLUserStore: UserStore {
    let db: any SQLDatabase

    private static let plain = [
        "id", "email", "email_verified", "phone", "phone_verified", "profile", "app_metadata", "state", "created_at",
        "updated_at", "last_login_at", "username", "is_anonymous",
    ]
    /// Whether the user has a password (1 per password credential) and linked identities (1000 each),
    /// in one index range.
    private static let signInKinds = """
        (SELECT COALESCE(SUM(CASE c.type WHEN 'password' THEN 1 ELSE 1000 END), 0) FROM credentials c
         WHERE c.user_id = u.id AND c.type IN ('password', 'oidc'))
        """

    static let columns = (plain.map { "u.\($0)" } + [signInKinds + " AS sign_in_kinds"]).joined(separator: ", ")

    /// ``columns`` named `u_…`, for a row that holds another table's columns too (``decode(_:prefix:)``).
    static let aliased = (plain.map { "u.\($0) AS u_\($0)" } + [signInKinds + " AS u_sign_in_kinds"]).joined(separator: ", ")

    func insert(_ user: UserRecord) async throws {
        // ON CONFLICT DO NOTHING instead of catching the violation: on PostgreSQL an error would abort
        // the surrounding transaction.
        let inserted = try await db.raw(
            """
            INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, app_metadata, state, created_at, updated_at, last_login_at, username, is_anonymous)
            VALUES (\(bind: Columns.id(user.id)), \(bind: user.email), \(bind: user.emailVerified ? 1 : 0),
                    \(bind: user.phone), \(bind: user.phoneVerified ? 1 : 0), \(bind: try Columns.json(user.profile)),
                    \(bind: try user.appMetadata.map(Columns.json)), \(bind: user.state.rawValue), \(bind: Columns.millis(user.createdAt)),
                    \(bind: Columns.millis(user.updatedAt)), \(bind: Columns.millis(user.lastLoginAt)), \(bind: user.username), \(bind: user.isAnonymous ? 1 : 0))
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

    func find(username: String) async throws -> UserRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM users u WHERE u.username = \(bind: username)")
            .first().map(Self.decode)
    }

    func update(_ user: UserRecord) async throws {
        try await db.raw(
            """
            UPDATE users SET email = \(bind: user.email), email_verified = \(bind: user.emailVerified ? 1 : 0),
                phone = \(bind: user.phone), phone_verified = \(bind: user.phoneVerified ? 1 : 0), username = \(bind: user.username),
                is_anonymous = \(bind: user.isAnonymous ? 1 : 0), profile = \(bind: try Columns.json(user.profile)), app_metadata = \(bind: try user.appMetadata.map(Columns.json)),
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

    static func decode(_ row: any SQLRow) throws -> UserRecord { try decode(row, prefix: "") }

    static func decode(_ row: any SQLRow, prefix: String) throws -> UserRecord {
        var user = UserRecord(
            id: try row.uuid(prefix + "id"), email: try row.optionalString(prefix + "email"),
            emailVerified: try row.bool(prefix + "email_verified"),
            phone: try row.optionalString(prefix + "phone"), phoneVerified: try row.bool(prefix + "phone_verified"),
            profile: try Columns.decodeProfile(try row.string(prefix + "profile")),
            appMetadata: try row.optionalString(prefix + "app_metadata").map { try Columns.decodeJSON([String: JSONValue].self, $0) },
            state: UserState(rawValue: try row.string(prefix + "state")), createdAt: try row.date(prefix + "created_at"),
            updatedAt: try row.date(prefix + "updated_at"), lastLoginAt: try row.optionalDate(prefix + "last_login_at"),
            hasPassword: false, username: try row.optionalString(prefix + "username"))
        let kinds = try row.int(prefix + "sign_in_kinds")
        user.hasPassword = kinds % 1000 > 0
        user.hasIdentities = kinds >= 1000
        user.isAnonymous = try row.bool(prefix + "is_anonymous")
        return user
    }
}
