import Foundation
import PostgresNIO
import _ConnectionPoolModule

/// The storage itself failing (a full disk, a read-only file or database, a lost or restarting
/// PostgreSQL, a standby promoted under us), told apart from a statement's own errors (a constraint, a
/// bug) so that callers get 503 with `Retry-After` instead of a 500 they cannot tell from a bug, and
/// the operator gets one log line per episode that names the storage's own error code.
enum StorageFaults {
    /// The storage's name for the error (`sqlite_full`, `postgres_53100`, `postgres_connection`), or
    /// nil when the error is not the storage failing.
    static func code(of error: any Error) -> String? {
        switch error {
        case let error as SQLiteStatementError:
            return error.storageCode
        case let error as PSQLError:
            return postgresCode(error)
        case is LeaseTimedOut:
            return "postgres_unreachable"
        case let error as ConnectionPoolError:
            // The pool could not make a connection for a while (its circuit breaker), or is shutting down.
            return error == .connectionCreationCircuitBreakerTripped ? "postgres_unreachable" : nil
        default:
            return nil
        }
    }

    /// PostgreSQL ended the transaction to resolve a conflict with another one (40001 serialization
    /// failure, 40P01 deadlock): nothing was written, the storage is healthy, and the same request a
    /// moment later succeeds. Gatehouse takes rows in one order so this should not happen; when it
    /// does, the caller gets 503 with `Retry-After` rather than a 500.
    static func isConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    private static func postgresCode(_ error: PSQLError) -> String? {
        switch error.code {
        case .server:
            guard let state = error.serverInfo?[.sqlState] else { return nil }
            // 08 connection, 53 insufficient resources (53100 disk full), 57 operator intervention
            // (shutdown, cannot connect now), 58 system errors (I/O), 25006 a read-only transaction
            // (the node we reached is a standby).
            let storage = ["08", "53", "57", "58"].contains(String(state.prefix(2))) || state == "25006"
            return storage ? "postgres_\(state)" : nil
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
            return "postgres_connection"
        default:
            return nil
        }
    }
}

/// The database cannot be opened for writing at start-up: said so, with what to check.
public struct StorageOpenError: Error, CustomStringConvertible {
    public var path: String
    public var code: String
    public var detail: String

    public var description: String {
        "cannot open the database \(path) for writing (\(code): \(detail)); check that its file system has space and is "
            + "mounted read-write, and that the file, its -wal and -shm files and their directory are writable by this user"
    }
}

/// No PostgreSQL connection was handed over within ``PostgresLease``'s bound while the storage was
/// failing or nothing reached it.
struct LeaseTimedOut: Error {}
