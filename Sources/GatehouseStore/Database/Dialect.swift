/// The few places the two databases differ, kept in one spot.
public enum Dialect: Sendable {
    case sqlite
    case postgres

    /// Statement that opens a write transaction. SQLite takes the write lock up front so that two
    /// writers never deadlock upgrading a read lock.
    var begin: String {
        switch self {
        case .sqlite: "BEGIN IMMEDIATE"
        case .postgres: "BEGIN"
        }
    }

    /// Row locking for a claim query: other nodes skip rows this one holds.
    var skipLocked: String {
        switch self {
        case .sqlite: ""
        case .postgres: " FOR UPDATE SKIP LOCKED"
        }
    }

    /// Serializes concurrent migrators (several nodes starting at once).
    var migrationLock: String? {
        switch self {
        case .sqlite: nil  // BEGIN IMMEDIATE already serializes writers.
        case .postgres: "SELECT pg_advisory_xact_lock(7312026)"
        }
    }
}
