import Foundation
import GatehouseCore
import Logging
import SQLKit

// Apart from the connection code so that the migrator, which runs on a connected persistence, and the
// persistence it runs on do not depend on each other.
extension SQLPersistence {
    /// Opens the database and applies pending migrations (up to `migrateUpTo` when given: upgrade tests
    /// write data in an older schema, then open again with every migration; 0 applies none, for
    /// `migrate --check`). Refuses a database a newer release migrated beyond what this one can serve
    /// (``SchemaTooNew``) and a migration a live older node still needs undone (``MigrationBlocked``).
    public static func open(
        _ url: DatabaseURL, logger: Logger, readers: Int = 4, migrateUpTo: Int? = nil
    ) async throws
        -> SQLPersistence
    {
        let persistence: SQLPersistence
        switch url {
        case .sqlite(let path):
            persistence = try await openSQLite(path: path, readers: readers, logger: logger)
        case .postgres(let raw):
            persistence = try openPostgres(url: raw, logger: logger)
        }
        do {
            let applied = try await Migrator(persistence: persistence, upTo: migrateUpTo).migrate()
            if !applied.isEmpty {
                logger.notice("migrations applied", metadata: ["versions": "\(applied.map(String.init).joined(separator: ","))"])
            }
            if migrateUpTo == nil, let tooNew = try await persistence.migrationPlan().tooNew { throw tooNew }
        } catch {
            await persistence.shutdown()
            throw error
        }
        return persistence
    }

    /// Applies the pending migrations (as opening does), returning the versions applied:
    /// `gatehouse migrate` opens without migrating, shows the plan, then calls this.
    public func applyMigrations() async throws -> [Int] { try await Migrator(persistence: self).migrate() }

    /// What migrating this database to this release involves (`gatehouse migrate --check`).
    public func migrationPlan(now: Date = Date()) async throws -> MigrationPlan {
        try await readDatabase { db in try await MigrationPlan.read(db, migrations: Migrations.all, now: now) }
    }

    /// Readiness: the schema is this release's, or a newer one this release still serves (a rolling
    /// upgrade whose newer nodes migrated first, only adding), and a write commits. A read alone would
    /// call a node ready on a full disk or a read-only database, where every sign-in fails.
    public func ping() async throws {
        let version = try await readDatabase { db in try await Migrator.appliedVersion(db) } ?? 0
        if version < Self.schemaVersion { throw PersistenceHealthError.migrationsPending }
        // A newer schema: served while no newer migration removed what this release uses.
        if version > Self.schemaVersion, let tooNew = try await migrationPlan().tooNew { throw tooNew }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            try await transactionOnDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO readiness_checks (name, checked_at) VALUES ('write', \(bind: now))
                    ON CONFLICT (name) DO UPDATE SET checked_at = excluded.checked_at
                    """
                ).run()
            }
        } catch {
            throw health.translate(error)
        }
        health.committed()
        // A write got through, but others failed a moment ago (a disk with a few pages left).
        if health.failing { throw GatehouseError.storageUnavailable() }
    }
}
