import Foundation
import GatehouseTesting
import Logging
import Testing

@testable import GatehouseStore

/// Migrations in expand/contract form: what lets nodes of two releases serve one database while the
/// newer one migrates (`scripts/upgrade-drill` runs the previous release and this one on one
/// PostgreSQL under load).
@Suite("Rolling upgrades")
struct RollingUpgradeTests {
    static var release: Int { SQLPersistence.schemaVersion }

    static func open(_ url: String) async throws -> SQLPersistence {
        var logger = Logger(label: "rolling")
        logger.logLevel = .critical
        return try await SQLPersistence.open(try DatabaseURL(url), logger: logger)
    }

    @Test(
        "MIG-1: every migration marked expand only adds: no table or column dropped or renamed, no column changed, no NOT NULL column without a default"
    )
    func expandOnlyAdds() throws {
        let removing = try Regex(
            #"(?i)\bDROP\s+(TABLE|COLUMN)\b|\bRENAME\b|\bALTER\s+COLUMN\b|ADD\s+COLUMN\s+\w+\s+\w+\s+NOT\s+NULL(?!.*DEFAULT)"#)
        for migration in Migrations.all where migration.kind == .expand {
            for statement in migration.statements {
                #expect(statement.firstMatch(of: removing) == nil, "migration \(migration.version) is marked expand but: \(statement)")
            }
        }
        // The two that could not be made so are marked, and say what they need.
        #expect(Migrations.all.filter { $0.kind != .expand }.map(\.version) == [3, 4])
        #expect(Migrations.all.map(\.version) == Array(1...Self.release), "versions are consecutive")
    }

    @Test(
        "MIG-2: a node serves a newer schema whose newer migrations only add, and refuses (not ready, no start) one that removes what it uses",
        arguments: TestDatabase.available)
    func newerSchema(_ database: TestDatabase) async throws {
        let (url, cleanup) = try await database.make()
        let persistence = try await Self.open(url)
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try await persistence.executeRaw([
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(Self.release + 1), 'a newer release adds', \(now))"
        ])
        try await persistence.ping()
        let again = try await Self.open(url)
        await again.shutdown()
        try await persistence.executeRaw([
            """
            INSERT INTO schema_migrations (version, name, applied_at, min_node_version)
            VALUES (\(Self.release + 2), 'a newer release drops', \(now), \(Self.release + 2))
            """
        ])
        await #expect(throws: SchemaTooNew.self) { try await persistence.ping() }
        do {
            let refused = try await Self.open(url)
            await refused.shutdown()
            Issue.record("a node started on a schema that removed what it uses")
        } catch let error as SchemaTooNew {
            #expect(error.migration == Self.release + 2 && error.description.contains("Run the newer release"))
        }
        await persistence.shutdown()
        await cleanup()
    }

    @Test(
        "MIG-3: a contract migration waits while a node older than it needs is alive (heartbeat), runs once it left, and records what it needs; an expand one runs beside any node",
        arguments: TestDatabase.available)
    func contractWaits(_ database: TestDatabase) async throws {
        let (url, cleanup) = try await database.make()
        let persistence = try await Self.open(url)
        let node = UUID()
        try await persistence.heartbeat(node: node, host: "old-node", startedAt: Date(), now: Date())
        let expand = Migration(
            version: Self.release + 1, name: "adds a table", statements: ["CREATE TABLE rolling_probe_a (x BIGINT)"])
        let contract = Migration(
            version: Self.release + 2, name: "drops what schema \(Self.release) used", kind: .contract(nodesFrom: Self.release + 1),
            statements: ["CREATE TABLE rolling_probe_b (x BIGINT)"])
        let migrator = Migrator(persistence: persistence, migrations: Migrations.all + [expand, contract])
        do {
            try await migrator.migrate()
            Issue.record("the contract migration ran while an older node was alive")
        } catch let blocked as MigrationBlocked {
            #expect(blocked.migration == contract.version && blocked.nodes.map(\.host) == ["old-node"])
            #expect(blocked.description.contains("upgrade or stop them first"))
        }
        let plan = try await persistence.migrationPlan()
        #expect(plan.databaseVersion == expand.version, "the expand migration before it ran")
        try await persistence.executeRaw(["INSERT INTO rolling_probe_a (x) VALUES (1)"])
        await #expect(throws: (any Error).self) { try await persistence.executeRaw(["INSERT INTO rolling_probe_b (x) VALUES (1)"]) }

        try await persistence.leave(node: node)
        #expect(try await migrator.migrate() == [contract.version])
        try await persistence.executeRaw(["INSERT INTO rolling_probe_b (x) VALUES (1)"])
        // This release's nodes now find a schema that needs newer ones.
        await #expect(throws: SchemaTooNew.self) { try await persistence.ping() }
        #expect(try await persistence.migrationPlan().newer.last?.minimumNode == Self.release + 1)
        await persistence.shutdown()
        await cleanup()
    }
}
