import Logging
import NIOCore
import SQLKit
import Synchronization

/// Statements this process sent to its database, BEGIN and COMMIT included: what tests read to hold
/// the token paths to their round trips (SC-1). One relaxed atomic add per statement.
public final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    public var value: Int { count.load(ordering: .relaxed) }

    func add() { count.add(1, ordering: .relaxed) }
}

/// A database that counts what goes through it and passes everything on unchanged.
struct CountingSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    let counter: StatementCounter

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        counter.add()
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        counter.add()
        try await base.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession { try await closure(CountingSQLDatabase(base: $0, counter: counter)) }
    }
}
