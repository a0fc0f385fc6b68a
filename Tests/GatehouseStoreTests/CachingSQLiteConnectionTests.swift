import Foundation
import Logging
import NIOCore
import NIOPosix
@testable import GatehouseStore
import SQLKit
import SQLiteKit
import Testing

/// The connections that keep their prepared statements, the writer and a reader, against a real
/// SQLite file in WAL mode, as the server runs them.
@Suite("SQLite connections that keep their statements")
struct CachingSQLiteConnectionTests {
    /// A database file of its own in a directory removed afterwards, and a quiet logger.
    private static func withPath(_ body: (String, Logger) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var logger = Logger(label: "reader")
        logger.logLevel = .critical
        try await body(directory.appendingPathComponent("g.db").path, logger)
    }

    private static func withFile(_ body: (CachingSQLiteConnection, CachingSQLiteConnection) async throws -> Void) async throws {
        try await withPath { path, logger in
            try await withConnections(path: path, logger: logger, body)
        }
    }

    private static func withConnections(
        path: String, logger: Logger, _ body: (CachingSQLiteConnection, CachingSQLiteConnection) async throws -> Void
    ) async throws {
        let writer = try await CachingSQLiteConnection.open(path: path, role: .writer, logger: logger)
        try await writer.sql().raw("CREATE TABLE t (x INTEGER NOT NULL)").run()
        let reader = try await CachingSQLiteConnection.open(path: path, role: .reader, logger: logger)
        do {
            try await body(writer, reader)
        } catch {
            await reader.close()
            await writer.close()
            throw error
        }
        await reader.close()
        await writer.close()
    }

    private static func xs(_ reader: CachingSQLiteConnection) async throws -> [Int] {
        try await reader.sql().raw("SELECT x FROM t ORDER BY x").all().map { try $0.decode(column: "x", as: Int.self) }
    }

    @Test("RD-1: a kept statement is prepared once, sees every commit made since its last run, and leaves the WAL free to checkpoint")
    func keptStatementsStayFresh() async throws {
        try await Self.withFile { writer, reader in
            #expect(try await Self.xs(reader) == [])
            for value in 1...3 {
                try await writer.sql().raw("INSERT INTO t (x) VALUES (\(bind: value))").run()
                #expect(try await Self.xs(reader) == Array(1...value))
            }
            #expect(reader.preparedCount == 1)
            // A reader holding a read transaction open would make the checkpoint report itself busy (1)
            // and leave frames behind.
            let checkpoint = try #require(try await writer.sql().raw("PRAGMA wal_checkpoint(TRUNCATE)").first())
            #expect(try checkpoint.decode(column: "busy", as: Int.self) == 0)
            #expect(try await Self.xs(reader) == [1, 2, 3])
        }
    }

    @Test("RD-2: past its bound a new statement takes the place of the one kept longest, and every statement still answers")
    func boundedCache() async throws {
        try await Self.withFile { _, reader in
            func statement(_ n: Int) -> String { "SELECT \(n) + ? AS v" }
            for n in 0..<(CachingSQLiteConnection.capacity + 5) {
                let row = try #require(try await reader.query(statement(n), [0]).first)
                #expect(try row.decode(column: "v", as: Int.self) == n)
            }
            #expect(reader.preparedCount == CachingSQLiteConnection.capacity)
            #expect((0..<5).allSatisfy { !reader.keeps(statement($0)) })
            #expect(reader.keeps(statement(5)) && reader.keeps(statement(CachingSQLiteConnection.capacity + 4)))
        }
    }

    @Test("RD-3: values come back as they were bound: text with a NUL and non-ASCII, a blob, floats, integers, null")
    func valuesRoundTrip() async throws {
        try await Self.withFile { _, reader in
            let text = "a\u{0}b ü 日本"
            let blob = Data([0, 1, 2, 255])
            let row = try #require(
                try await reader.sql().raw(
                    "SELECT \(bind: text) AS t, \(bind: blob) AS b, \(bind: 2.5) AS f, \(bind: Int.max) AS i, \(bind: String?.none) AS n"
                ).first())
            #expect(try row.decode(column: "t", as: String.self) == text)
            #expect(try row.decode(column: "b", as: Data.self) == blob)
            #expect(try row.decode(column: "f", as: Double.self) == 2.5)
            #expect(try row.decode(column: "i", as: Int.self) == Int.max)
            #expect(try row.decodeNil(column: "n"))
            #expect(try row.decodeNil(column: "absent"))
            #expect(!row.contains(column: "absent"))
            #expect(throws: StoreDecodingError.self) { try row.decode(column: "absent", as: String.self) }
            #expect(row.allColumns == ["t", "b", "f", "i", "n"])
        }
    }

    @Test("RD-4: a failing statement throws SQLite's error, is not kept, and the connection answers after it; nothing writes through it")
    func errors() async throws {
        try await Self.withFile { _, reader in
            do {
                _ = try await reader.sql().raw("SELECT * FROM missing").all()
                Issue.record("a missing table was read")
            } catch let error as SQLiteStatementError {
                #expect(error.message.contains("no such table"))
                #expect(error.storageCode == nil)
            }
            #expect(reader.preparedCount == 0)
            do {
                try await reader.sql().raw("INSERT INTO t (x) VALUES (1)").run()
                Issue.record("a reader wrote")
            } catch let error as SQLiteStatementError {
                #expect(error.storageCode == "sqlite_readonly")
            }
            #expect(try await Self.xs(reader) == [])
        }
    }

    @Test("RD-6: on Gatehouse's own schema the stores' token reads keep their statements: none is prepared again for a new value")
    func plansDoNotFollowValues() async throws {
        try await Self.withPath { path, logger in try await Self.storesKeepTheirStatements(path: path, logger: logger) }
    }

    private static func storesKeepTheirStatements(path: String, logger: Logger) async throws {
        // Opening a persistence migrates the file to the current schema, partial indexes included.
        let persistence = try await SQLPersistence.open(try DatabaseURL("sqlite://" + path), logger: logger)
        let reader = try await CachingSQLiteConnection.open(path: path, role: .reader, logger: logger)
        let sessions = SQLSessionStore(db: reader.sql())
        let users = SQLUserStore(db: reader.sql())
        let tokens = SQLRefreshTokenStore(db: reader.sql())
        for _ in 0..<5 {
            // A session joined with its user is what `/v1/me` reads; without the planner's stability
            // guarantee SQLite prepared it again on every run (its plan followed the bound id).
            #expect(try await sessions.findWithUser(id: UUID()) == nil)
            #expect(try await sessions.findForRefresh(id: UUID()) == nil)
            #expect(try await sessions.find(id: UUID()) == nil)
            #expect(try await users.find(id: UUID()) == nil)
            #expect(try await tokens.findWithSession(hash: UUID().uuidString) == nil)
        }
        #expect(reader.preparedCount == 5)
        #expect(reader.repreparedCount == 0)
        await reader.close()
        await persistence.shutdown()
    }

    @Test("RD-7: the writer puts the file in WAL mode with foreign keys on and full syncs, and a rolled-back transaction leaves nothing")
    func writer() async throws {
        try await Self.withFile { writer, reader in
            func pragma<T: Decodable>(_ name: String, as type: T.Type) async throws -> T {
                let row = try #require(try await writer.sql().raw(SQLQueryString("PRAGMA " + name)).first())
                return try row.decode(column: name, as: T.self)
            }
            #expect(try await pragma("journal_mode", as: String.self) == "wal")
            #expect(try await pragma("foreign_keys", as: Int.self) == 1)
            #expect(try await pragma("synchronous", as: Int.self) == 2)
            try await writer.sql().raw("BEGIN IMMEDIATE").run()
            try await writer.sql().raw("INSERT INTO t (x) VALUES (7)").run()
            try await writer.sql().raw("ROLLBACK").run()
            #expect(try await Self.xs(reader) == [])
            do {
                try await writer.sql().raw("ROLLBACK").run()
                Issue.record("a rollback with no transaction succeeded")
            } catch let error as SQLiteStatementError {
                // What `Rollback` recognises as "SQLite already rolled back".
                #expect(error.message.contains("no transaction is active"))
            }
        }
    }

    @Test("RD-5: a closed reader refuses queries and closes twice without harm")
    func closed() async throws {
        try await Self.withFile { _, reader in
            await reader.close()
            await #expect(throws: SQLiteStatementError.self) { try await Self.xs(reader) }
            await reader.close()
        }
    }
}
