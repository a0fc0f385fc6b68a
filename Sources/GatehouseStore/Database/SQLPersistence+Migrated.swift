import GatehouseCore
import Logging

// Apart from the connection code so that the migrator, which runs on a connected persistence, and the
// persistence it runs on do not depend on each other.
extension SQLPersistence {
    /// Opens the database and applies pending migrations (up to `migrateUpTo` when given: upgrade tests
    /// write data in an older schema, then open again with every migration).
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
            try await Migrator(persistence: persistence, upTo: migrateUpTo).migrate()
        } catch {
            await persistence.shutdown()
            throw error
        }
        return persistence
    }

    public func ping() async throws {
        let version = try await readDatabase { db in try await Migrator.appliedVersion(db) }
        guard version == Migrations.all.last?.version else { throw PersistenceHealthError.migrationsPending }
    }
}
