import Foundation
import SQLKit

/// Applies pending migrations, each in its own transaction, safe to run from several nodes at once.
struct Migrator {
    let persistence: SQLPersistence
    /// Stop after this version (upgrade tests write data in an older schema first); nil = all.
    var upTo: Int? = nil

    func migrate() async throws {
        let dialect = persistence.dialect
        try await persistence.transactionOnDatabase { db in
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
            ).run()
        }
        for migration in Migrations.all where migration.version <= (upTo ?? Int.max) {
            try await persistence.transactionOnDatabase { db in
                if let lock = dialect.migrationLock { try await db.raw(SQLQueryString(lock)).run() }
                // Re-checked under the lock: another node may have applied it meanwhile.
                let applied = try await db.raw(
                    "SELECT version FROM schema_migrations WHERE version = \(bind: migration.version)"
                ).first()
                guard applied == nil else { return }
                for statement in migration.statements {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                try await db.raw(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Columns.millis(Date())))
                    """
                ).run()
            }
        }
    }

    static func appliedVersion(_ db: any SQLDatabase) async throws -> Int? {
        try await db.raw("SELECT MAX(version) AS version FROM schema_migrations").first()?.optionalInt("version")
    }
}
