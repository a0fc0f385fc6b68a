import Foundation
import GatehouseCore
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import Tracing
import Synchronization

/// ``Persistence`` over SQL: SQLite (one writer connection, several readers, WAL) or PostgreSQL
/// (PostgresNIO's pool). Stores see only `SQLDatabase` and the ``Dialect``.
public final class SQLPersistence: Persistence {
    public let dialect: Dialect
    private let backend: Backend
    private let logger: Logger
    /// How long a request waits for a PostgreSQL connection before it is answered 503.
    static let leaseWait: TimeAmount = .seconds(5)
    /// Storage faults answered as 503, logged once per episode.
    let health: StorageHealth
    /// PostgreSQL leases waiting for the pool, given up by ``PostgresLease``'s rule over ``leaseWait``.
    let leases: LeaseWatch
    /// Every statement sent through the stores, reads, writes and transactions' BEGIN and COMMIT.
    public let statements = StatementCounter()

    enum Backend: Sendable {
        case sqlite(writer: CachingSQLiteConnection, writes: SQLiteWriteQueue, readers: SQLiteReaderPool)
        case postgres(client: PostgresClient, runner: Task<Void, Never>)
    }

    private init(dialect: Dialect, backend: Backend, logger: Logger) {
        self.dialect = dialect
        self.backend = backend
        self.logger = logger
        let health = StorageHealth(logger: logger)
        self.health = health
        self.leases = LeaseWatch(wait: Self.leaseWait, lastSuccess: { health.lastSuccess }, failing: { health.failing })
    }

    static func openSQLite(path: String, readers: Int, logger: Logger) async throws -> SQLPersistence {
        // The file holds password hashes: readable by the service user only. SQLite gives the -wal and
        // -shm files the same permissions.
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        // Every connection opened so far, closed again if a later step fails: a read-only file or a
        // full disk is a clear start-up error, not a connection left open.
        var opened: [CachingSQLiteConnection] = []
        let writer: CachingSQLiteConnection
        do {
            writer = try await CachingSQLiteConnection.open(path: path, role: .writer, logger: logger)
            opened.append(writer)
            // A read-only file or directory opens without complaint and fails at the first write: find
            // out now, while an operator is watching the start.
            try await writer.sql().raw("BEGIN IMMEDIATE").run()
            try await writer.sql().raw("COMMIT").run()
            for _ in 0..<max(1, readers) {
                opened.append(try await CachingSQLiteConnection.open(path: path, role: .reader, logger: logger))
            }
        } catch {
            for connection in opened { await connection.close() }
            guard let code = StorageFaults.code(of: error) else { throw error }
            throw StorageOpenError(path: path, code: code, detail: (error as? SQLiteStatementError)?.message ?? "\(error)")
        }
        return SQLPersistence(
            dialect: .sqlite,
            backend: .sqlite(
                writer: writer,
                writes: SQLiteWriteQueue(db: writer.sql(), begin: Dialect.sqlite.begin, logger: logger),
                readers: SQLiteReaderPool(Array(opened.dropFirst()))),
            logger: logger)
    }

    static func openPostgres(url: String, logger: Logger) throws -> SQLPersistence {
        let core = try SQLPostgresConfiguration(url: url).coreConfiguration
        guard let host = core.host, let port = core.port else {
            throw DatabaseURLError.invalid("postgres URL needs a host and port")
        }
        let tls: PostgresClient.Configuration.TLS =
            switch (core.tls.isEnforced, core.tls.isAllowed) {
            case (true, _): .require(core.tls.sslContext!.configuration)
            case (_, true): .prefer(core.tls.sslContext!.configuration)
            default: .disable
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: core.username, password: core.password, database: core.database, tls: tls)
        configuration.options.maximumConnections = 8
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        // The pool needs its run loop; it lives as long as this persistence and ends in `shutdown()`.
        let runner = Task { await client.run() }
        return SQLPersistence(dialect: .postgres, backend: .postgres(client: client, runner: runner), logger: logger)
    }

    public func read<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        guard TracingSwitch.isOn, InstrumentationContext.current != nil else { return try await readUntraced(body) }
        return try await traced("db.read") { try await self.readUntraced(body) }
    }

    private func readUntraced<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        let result: R
        do {
            result = try await readDatabase { db in try await body(SQLStores(db: db, dialect: self.dialect)) }
        } catch {
            throw health.translate(error)
        }
        health.answered()
        return result
    }

    func readDatabase<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        switch backend {
        case .sqlite(_, _, let readers):
            return try await readers.withConnection { try await body(self.counted($0.sql())) }
        case .postgres(let client, _):
            return try await PostgresLease.with(client, watch: leases) { connection in
                try await body(self.counted(connection.sql(queryLogLevel: nil)))
            }
        }
    }

    /// Runs raw SQL in one transaction: for upgrade tests that must write rows the way an older
    /// version did, below the stores.
    public func executeRaw(_ statements: [String]) async throws {
        try await transactionOnDatabase { db in
            for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
        }
    }

    /// The first column of each row of a raw query, as integers: for tests and drills that measure
    /// what the stores wrote (row counts, sizes), below the stores.
    public func rawIntegers(_ query: String) async throws -> [Int] {
        try await readDatabase { db in
            try await db.raw(SQLQueryString(query)).all().map { try $0.decode(column: $0.allColumns[0], as: Int.self) }
        }
    }

    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        guard TracingSwitch.isOn, InstrumentationContext.current != nil else { return try await transactionUntraced(body) }
        return try await traced("db.transaction") { try await self.transactionUntraced(body) }
    }

    private func transactionUntraced<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        let result: R
        do {
            result = try await transactionOnDatabase { db in try await body(SQLStores(db: db, dialect: self.dialect)) }
        } catch {
            throw health.translate(error)
        }
        health.committed()
        return result
    }

    public func write<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        guard TracingSwitch.isOn, InstrumentationContext.current != nil else { return try await writeUntraced(body) }
        return try await traced("db.write") { try await self.writeUntraced(body) }
    }

    private func writeUntraced<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        let result: R
        do {
            switch backend {
            case .sqlite(_, let writes, _):
                // The writer queue commits in groups anyway: a statement alone costs nothing more.
                result = try await writes.run { db in try await body(SQLStores(db: self.counted(db), dialect: self.dialect)) }
            case .postgres(let client, _):
                result = try await PostgresLease.with(client, watch: leases) { connection in
                    try await body(SQLStores(db: self.counted(connection.sql(queryLogLevel: nil)), dialect: self.dialect))
                }
            }
        } catch {
            throw health.translate(error)
        }
        health.committed()
        return result
    }

    private func counted(_ db: any SQLDatabase) -> any SQLDatabase { CountingSQLDatabase(base: db, counter: statements) }

    /// One transaction: on SQLite through the writer's group-commit queue, on PostgreSQL on a pooled connection.
    func transactionOnDatabase<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    )
        async throws -> R
    {
        switch backend {
        case .sqlite(_, let writes, _):
            // The queue's BEGIN and COMMIT are not counted: they are local calls, shared by a group.
            return try await writes.run { db in try await body(self.counted(db)) }
        case .postgres(let client, _):
            return try await PostgresLease.with(client, watch: leases) { connection in
                try await self.rawTransaction(self.counted(connection.sql(queryLogLevel: nil)), body)
            }
        }
    }

    private func rawTransaction<R: Sendable>(
        _ db: any SQLDatabase, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    )
        async throws -> R
    {
        try await db.raw(SQLQueryString(dialect.begin)).run()
        do {
            let result = try await body(db)
            try await db.raw("COMMIT").run()
            return result
        } catch {
            await Rollback.run(db, logger: logger)
            throw error
        }
    }

    public func shutdown() async {
        switch backend {
        case .sqlite(let writer, _, let readers):
            for reader in readers.all { await reader.close() }
            // Fold the WAL back into the main file so a stopped server leaves one file behind.
            try? await writer.sql().raw("PRAGMA wal_checkpoint(TRUNCATE)").run()
            await writer.close()
        case .postgres(_, let runner):
            runner.cancel()
            _ = await runner.value
        }
    }
}

extension SQLPersistence {
    /// One span per statement group (a read or a transaction), named for what it is, never for its
    /// SQL or values; only inside a trace (a request, a hook call): the background loops' polling
    /// would otherwise send a root trace a second.
    fileprivate func traced<R>(_ name: String, _ body: () async throws -> R) async throws -> R {
        try await withSpan(name, ofKind: .client) { span in
            span.attributes["db.system"] = dialect == .postgres ? "postgresql" : "sqlite"
            return try await body()
        }
    }
}

public enum PersistenceHealthError: Error {
    case migrationsPending
}
