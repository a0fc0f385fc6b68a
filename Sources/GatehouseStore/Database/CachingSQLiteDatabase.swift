import Logging
import NIOCore
import SQLKit
import SQLiteKit

/// An ``CachingSQLiteConnection`` as the `SQLDatabase` the stores are written against: SQLKit serializes the
/// query in SQLite's dialect, the reader runs it.
struct CachingSQLiteDatabase: SQLDatabase {
    let reader: CachingSQLiteConnection

    var logger: Logger { reader.logger }
    var eventLoop: any EventLoop { reader.eventLoop }
    var dialect: any SQLDialect { SQLiteDialect() }
    // No query text in the logs: binds carry secrets' hashes and addresses.
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        for row in try await reader.query(sql, binds) { onRow(row) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}

extension CachingSQLiteConnection {
    /// This connection as an `SQLDatabase`, for the stores.
    func sql() -> any SQLDatabase { CachingSQLiteDatabase(reader: self) }
}
