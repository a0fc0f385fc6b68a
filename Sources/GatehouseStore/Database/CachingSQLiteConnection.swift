import Logging
import NIOCore
import NIOPosix
import SQLiteKit
import CSQLitePlanStability
import Synchronization
// sqlite-nio's own build of SQLite, not a second copy: two SQLite libraries in one process would each
// keep their own table of POSIX locks on the same file, and the one closing a descriptor would drop
// the other's locks (SQLite's "How To Corrupt" §2.2). SwiftPM offers this module only as sqlite-nio's
// internal target; if a release renames it (it was `CSQLite` before), this import is what breaks.
import VaporCSQLite

/// An SQLite connection that keeps its prepared statements: the server's one writer and its readers.
/// sqlite-nio parses every statement again on each query and finalizes it after (its statement cache
/// is a to-do in its source): `sqlite3_prepare_v3` was 12 % of the CPU of a `/v1/me` and 9 % of a
/// refresh. The stores send a few dozen distinct statements, so a connection keeps up to ``capacity``
/// of them, reset after each use. (No listed package caches SQLite statements behind SQLKit; GRDB has
/// a cache but not the SQLKit interface the stores are written to.)
final class CachingSQLiteConnection: Sendable {
    /// Distinct statements kept per connection. A new one past this takes the place of the one kept
    /// longest, so statements run once (the migrations, at start, on the writer) cannot keep the
    /// stores' few dozen, which are fixed text, out for good.
    static let capacity = 128

    private struct Prepared {
        let statement: OpaquePointer
        let columns: CachingSQLiteColumns
    }

    private struct State: ~Copyable {
        var handle: OpaquePointer?
        var cache: [String: Prepared] = [:]
        /// The kept statements' text, the longest kept first.
        var order: [String] = []

        /// Keeps `prepared` for `sql`, finalizing the statement kept longest if there is no room.
        mutating func keep(_ prepared: Prepared, for sql: String) {
            if cache.count >= CachingSQLiteConnection.capacity, !order.isEmpty {
                let oldest = order.removeFirst()
                if let evicted = cache.removeValue(forKey: oldest) { sqlite_nio_sqlite3_finalize(evicted.statement) }
            }
            cache[sql] = prepared
            order.append(sql)
        }

        /// Forgets `sql`'s statement without finalizing it (its caller does); false if it was not kept.
        mutating func forget(_ sql: String) -> Bool {
            guard cache.removeValue(forKey: sql) != nil else { return false }
            order.removeAll { $0 == sql }
            return true
        }
    }

    // Every use of the handle holds this lock: sqlite3 calls on one connection never overlap, which is
    // what lets the connection open without SQLite's own mutex. The reader pool gives each reader to
    // one read at a time and the write queue has one drainer, so the lock is never contended.
    private let state: Mutex<State>
    private let threadPool: NIOThreadPool
    let eventLoop: any EventLoop
    let logger: Logger

    private static let encoder = SQLiteDataEncoder()

    private init(handle: SQLiteHandle, threadPool: NIOThreadPool, eventLoop: any EventLoop, logger: Logger) {
        self.state = Mutex(State(handle: handle.raw))
        self.threadPool = threadPool
        self.eventLoop = eventLoop
        self.logger = logger
    }

    enum Role {
        /// Reads only: `query_only`, so no statement sent here can change the database. Read-write at
        /// the file level all the same, as WAL needs for its shared memory.
        case reader
        /// The one connection that writes: it creates the file if need be and puts it in WAL mode.
        case writer
    }

    /// Opens `path` in `role`.
    static func open(
        path: String, role: Role, threadPool: NIOThreadPool = .singleton, logger: Logger
    ) async throws -> CachingSQLiteConnection {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let handle: SQLiteHandle = try await threadPool.runIfActive {
            var handle: OpaquePointer?
            var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
            if role == .writer { flags |= SQLITE_OPEN_CREATE }
            let opened = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
            guard opened == SQLITE_OK, let handle else {
                let error = SQLiteStatementError(code: opened, handle: handle)
                sqlite_nio_sqlite3_close(handle)
                throw error
            }
            do {
                try configure(handle, role: role)
            } catch {
                sqlite_nio_sqlite3_close(handle)
                throw error
            }
            return SQLiteHandle(raw: handle)
        }
        return CachingSQLiteConnection(handle: handle, threadPool: threadPool, eventLoop: eventLoop, logger: logger)
    }

    private static func configure(_ handle: OpaquePointer, role: Role) throws {
        // busy_timeout covers the CLI writing while a server runs, and a reader meeting a checkpoint
        // that restarts the WAL.
        sqlite_nio_sqlite3_busy_timeout(handle, 5000)
        let pragmas =
            switch role {
            case .reader: ["PRAGMA query_only = ON"]
            // FULL: a 2xx means committed, even across a power cut.
            case .writer: ["PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL", "PRAGMA journal_mode = WAL"]
            }
        for pragma in pragmas {
            let ran = sqlite_nio_sqlite3_exec(handle, pragma, nil, nil, nil)
            guard ran == SQLITE_OK else { throw SQLiteStatementError(code: ran, handle: handle) }
        }
        // A kept statement must keep its plan. Without the planner's stability guarantee SQLite plans
        // some statements for the values bound (a join with `users`, whose partial index `WHERE
        // is_anonymous = 1` it compares with each `= ?` term) and prepares them again whenever a value
        // changes: 17 % of a `/v1/me` went to that. No statement here has a plan that needs a value: the
        // one `LIKE` is case-insensitive, which no index of ours serves, and the partial index is met
        // by a literal (RD-6).
        let stable = gatehouse_sqlite_enable_qpsg(UnsafeMutableRawPointer(handle))
        guard stable == SQLITE_OK else {
            throw SQLiteStatementError(code: stable, message: "could not turn on the query planner's stability guarantee")
        }
    }

    /// Runs one statement to its end on the thread pool and returns its rows.
    func query(_ sql: String, _ binds: [any Encodable & Sendable]) async throws -> [CachingSQLiteRow] {
        let values = try binds.map { try Self.encoder.encode($0) }
        return try await threadPool.runIfActive { try self.run(sql, values) }
    }

    private func run(_ sql: String, _ binds: [SQLiteData]) throws -> [CachingSQLiteRow] {
        try state.withLock { state in
            guard let handle = state.handle else { throw SQLiteStatementError(code: SQLITE_MISUSE, message: "connection is closed") }
            let prepared: Prepared
            var keep = true
            if let cached = state.cache[sql] {
                prepared = cached
            } else {
                prepared = try Self.prepare(sql, on: handle)
                state.keep(prepared, for: sql)
            }
            let statement = prepared.statement
            // Reset before the statement goes back to the cache: a statement left mid-step would hold
            // its read transaction open, and with it the WAL from being checkpointed.
            defer {
                if keep {
                    sqlite_nio_sqlite3_reset(statement)
                    sqlite_nio_sqlite3_clear_bindings(statement)
                } else {
                    sqlite_nio_sqlite3_finalize(statement)
                }
            }
            do {
                try Self.bind(binds, to: statement, on: handle)
                var rows: [CachingSQLiteRow] = []
                while true {
                    let stepped = sqlite_nio_sqlite3_step(statement)
                    if stepped == SQLITE_DONE { return rows }
                    guard stepped == SQLITE_ROW else { throw SQLiteStatementError(code: stepped, handle: handle) }
                    rows.append(
                        CachingSQLiteRow(
                            columns: prepared.columns, values: try Self.values(of: statement, count: prepared.columns.names.count)))
                }
            } catch {
                // A statement that failed is not kept: the next use prepares it afresh.
                if keep, state.forget(sql) { keep = false }
                throw error
            }
        }
    }

    private static func prepare(_ sql: String, on handle: OpaquePointer) throws -> Prepared {
        var statement: OpaquePointer?
        let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
        let prepared = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw SQLiteStatementError(code: prepared, handle: handle) }
        let count = sqlite_nio_sqlite3_column_count(statement)
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for index in 0..<count {
            names.append(sqlite_nio_sqlite3_column_name(statement, index).map { String(cString: $0) } ?? "")
        }
        return Prepared(statement: statement, columns: CachingSQLiteColumns(names))
    }

    private static func bind(_ binds: [SQLiteData], to statement: OpaquePointer, on handle: OpaquePointer) throws {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let bound: Int32
            switch value {
            case .integer(let value): bound = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(value))
            case .float(let value): bound = sqlite_nio_sqlite3_bind_double(statement, index, value)
            case .null: bound = sqlite_nio_sqlite3_bind_null(statement, index)
            case .text(let value):
                bound = sqlite_nio_sqlite3_bind_text64(
                    statement, index, value, UInt64(value.utf8.count), transient, UInt8(SQLITE_UTF8))
            case .blob(let value):
                bound = value.withUnsafeReadableBytes {
                    sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), transient)
                }
            }
            guard bound == SQLITE_OK else { throw SQLiteStatementError(code: bound, handle: handle) }
        }
    }

    private static func values(of statement: OpaquePointer, count: Int) throws -> [SQLiteData] {
        var values: [SQLiteData] = []
        values.reserveCapacity(count)
        for index in 0..<Int32(count) {
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER: values.append(.integer(Int(sqlite_nio_sqlite3_column_int64(statement, index))))
            case SQLITE_FLOAT: values.append(.float(sqlite_nio_sqlite3_column_double(statement, index)))
            case SQLITE_NULL: values.append(.null)
            case SQLITE_TEXT:
                // By length, not to the first NUL: a text value may hold one.
                let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
                let text = sqlite_nio_sqlite3_column_text(statement, index)
                values.append(.text(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""))
            case SQLITE_BLOB:
                let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
                var buffer = ByteBufferAllocator().buffer(capacity: length)
                if let bytes = sqlite_nio_sqlite3_column_blob(statement, index) {
                    buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: length))
                }
                values.append(.blob(buffer))
            default:
                throw SQLiteStatementError(code: SQLITE_MISMATCH, message: "unexpected column type")
            }
        }
        return values
    }

    /// Finalizes every kept statement and closes the connection; a query after this throws.
    func close() async {
        let handle: SQLiteHandle? = state.withLock { state in
            for prepared in state.cache.values { sqlite_nio_sqlite3_finalize(prepared.statement) }
            state.cache = [:]
            state.order = []
            defer { state.handle = nil }
            return state.handle.map(SQLiteHandle.init(raw:))
        }
        guard let handle else { return }
        _ = try? await threadPool.runIfActive { sqlite_nio_sqlite3_close(handle.raw) }
    }

    // A connection dropped without `close()` (a test that threw between a server's start and its stop)
    // gives its statements and file descriptors back here rather than keeping them for the process's
    // life. Nothing else can hold the handle any more, so the lock is free.
    deinit {
        state.withLock { state in
            for prepared in state.cache.values { sqlite_nio_sqlite3_finalize(prepared.statement) }
            state.cache = [:]
            state.order = []
            if let handle = state.handle { sqlite_nio_sqlite3_close_v2(handle) }
            state.handle = nil
        }
    }

    /// Statements this connection keeps prepared: for the test that holds it to its bound.
    var preparedCount: Int { state.withLock { $0.cache.count } }

    /// Whether `sql`'s statement is kept prepared: for the same test.
    func keeps(_ sql: String) -> Bool { state.withLock { $0.cache[sql] != nil } }

    /// How often SQLite prepared the kept statements again by itself (a schema change, or a plan that
    /// depends on a bound value): for the tests that hold the cache to what it is for.
    var repreparedCount: Int {
        state.withLock { state in
            state.cache.values.reduce(0) { $0 + Int(sqlite_nio_sqlite3_stmt_status($1.statement, SQLITE_STMTSTATUS_REPREPARE, 0)) }
        }
    }

}

/// SQLite's "copy the value now" destructor: the bound text and blobs are Swift values that do not
/// outlive the call.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A `sqlite3*` carried from the thread pool that opened it to the reader that owns it. Only the
/// reader's lock guards its use after that, so moving the pointer between threads is safe.
private struct SQLiteHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// An SQLite error on a reader connection, by SQLite's extended result code.
struct SQLiteStatementError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    init(code: Int32, handle: OpaquePointer?) {
        let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(code: code, message: message ?? String(cString: sqlite_nio_sqlite3_errstr(code)))
    }

    var description: String { "SQLite error \(code): \(message)" }

    /// The storage's name for the error, as ``StorageFaults`` names sqlite-nio's: nil when it is not the
    /// storage failing.
    var storageCode: String? {
        switch code & 0xFF {
        case SQLITE_FULL: "sqlite_full"
        case SQLITE_READONLY: "sqlite_readonly"
        case SQLITE_IOERR: "sqlite_ioerr"
        case SQLITE_CANTOPEN: "sqlite_cantopen"
        case SQLITE_BUSY: "sqlite_busy"
        case SQLITE_NOLFS: "sqlite_nolfs"
        case SQLITE_NOMEM: "sqlite_nomem"
        case SQLITE_PERM: "sqlite_perm"
        case SQLITE_CORRUPT, SQLITE_NOTADB: "sqlite_corrupt"
        default: nil
        }
    }
}
