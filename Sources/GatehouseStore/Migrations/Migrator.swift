import Foundation
import SQLKit

/// Applies pending migrations, each in its own transaction under the migration lock, safe to run from
/// several nodes at once. A migration that removes what older nodes use (contract, breaking) waits
/// until no such node is alive (``MigrationBlocked``); one that only adds runs beside any node.
struct Migrator {
    let persistence: SQLPersistence
    /// Stop after this version (upgrade tests write data in an older schema first); nil = all.
    var upTo: Int? = nil
    var migrations: [Migration] = Migrations.all

    @discardableResult
    func migrate(now: Date = Date()) async throws -> [Int] {
        let dialect = persistence.dialect
        try await persistence.transactionOnDatabase { db in
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
            ).run()
        }
        var applied: [Int] = []
        for migration in migrations where migration.version <= (upTo ?? Int.max) {
            let list = migrations
            let ran = try await persistence.transactionOnDatabase { db -> Bool in
                if let lock = dialect.migrationLock { try await db.raw(SQLQueryString(lock)).run() }
                // Re-checked under the lock: another node may have applied it meanwhile.
                let plan = try await MigrationPlan.read(db, migrations: list, now: now)
                guard let step = plan.pending.first(where: { $0.version == migration.version }) else { return false }
                if !step.blockedBy.isEmpty {
                    throw MigrationBlocked(
                        migration: step.version, name: step.name, kind: step.kind ?? "", needs: step.minimumNode ?? 0, nodes: step.blockedBy
                    )
                }
                for statement in migration.statements {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                try await db.raw(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Columns.millis(now)))
                    """
                ).run()
                // Recorded from 15 on (its column): older nodes of a newer schema read it to know
                // whether they may still serve.
                if migration.version > 15, let minimum = step.minimumNode {
                    try await db.raw(
                        "UPDATE schema_migrations SET min_node_version = \(bind: minimum) WHERE version = \(bind: migration.version)"
                    ).run()
                }
                return true
            }
            if ran { applied.append(migration.version) }
        }
        return applied
    }

    static func appliedVersion(_ db: any SQLDatabase) async throws -> Int? {
        try await db.raw("SELECT MAX(version) AS version FROM schema_migrations").first()?.optionalInt("version")
    }
}
