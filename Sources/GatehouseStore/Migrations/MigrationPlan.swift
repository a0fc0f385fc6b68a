import Foundation
import SQLKit

/// What upgrading a database to this release involves, and what stands in the way: `gatehouse
/// migrate --check`, and the rule the migrator itself keeps.
public struct MigrationPlan: Sendable {
    public struct Step: Sendable {
        public var version: Int
        public var name: String
        /// `expand`, `contract` or `breaking`; nil for a newer release's migration (only its
        /// requirement is recorded).
        public var kind: String?
        /// The oldest schema a node may run and still serve after it; nil: any.
        public var minimumNode: Int?
        /// Live nodes older than ``minimumNode``: the migration waits for them.
        public var blockedBy: [ClusterNode]
    }

    public var databaseVersion: Int
    public var releaseVersion: Int
    public var pending: [Step]
    /// Applied by a newer release.
    public var newer: [Step]
    /// Nodes heard from in the last 90 s (nil: the database predates the heartbeat).
    public var liveNodes: [ClusterNode]?

    public var blocked: Bool { pending.contains { !$0.blockedBy.isEmpty } }
    /// This release's nodes cannot serve this database: a newer release removed what they use.
    public var tooNew: SchemaTooNew? {
        guard let step = newer.first(where: { ($0.minimumNode ?? 0) > releaseVersion }) else { return nil }
        return SchemaTooNew(
            databaseVersion: databaseVersion, releaseVersion: releaseVersion, migration: step.version, needs: step.minimumNode ?? 0)
    }

    /// Reads the plan inside `db` (the migrator does so under its lock).
    static func read(_ db: any SQLDatabase, migrations: [Migration], now: Date) async throws -> MigrationPlan {
        let applied = try await db.raw("SELECT version FROM schema_migrations").all().map { try $0.int("version") }
        let appliedSet = Set(applied)
        let databaseVersion = applied.max() ?? 0
        let release = migrations.last?.version ?? 0
        // The heartbeat table and the requirement column come with migration 15.
        let rolling = appliedSet.contains(15)
        let nodes = rolling ? try await SQLPersistence.liveNodes(db, now: now) : nil
        let pending = migrations.filter { !appliedSet.contains($0.version) }.map { migration -> Step in
            let minimum = migration.kind.minimumNode(version: migration.version)
            return Step(
                version: migration.version, name: migration.name, kind: migration.kind.label, minimumNode: minimum,
                blockedBy: minimum.map { needed in (nodes ?? []).filter { $0.schemaVersion < needed } } ?? [])
        }
        var newer: [Step] = []
        if rolling, databaseVersion > release {
            newer = try await db.raw(
                "SELECT version, name, min_node_version FROM schema_migrations WHERE version > \(bind: release) ORDER BY version"
            ).all().map {
                Step(
                    version: try $0.int("version"), name: try $0.string("name"), kind: nil,
                    minimumNode: try $0.optionalInt("min_node_version"), blockedBy: [])
            }
        }
        return MigrationPlan(databaseVersion: databaseVersion, releaseVersion: release, pending: pending, newer: newer, liveNodes: nodes)
    }
}

/// A newer release applied a migration that removes what this release's nodes use.
public struct SchemaTooNew: Error, CustomStringConvertible {
    public var databaseVersion: Int
    public var releaseVersion: Int
    public var migration: Int
    public var needs: Int

    public var description: String {
        "the database's schema (\(databaseVersion)) was migrated by a newer release: its migration \(migration) needs nodes "
            + "of schema \(needs) or newer, and this node runs schema \(releaseVersion). Run the newer release on this node."
    }
}

/// A pending migration removes what a live node still uses.
public struct MigrationBlocked: Error, CustomStringConvertible {
    public var migration: Int
    public var name: String
    public var kind: String
    public var needs: Int
    public var nodes: [ClusterNode]

    public var description: String {
        let list = nodes.map { "\($0.host) (schema \($0.schemaVersion), node \($0.id.prefix(8)))" }.joined(separator: ", ")
        return "migration \(migration) (\(name), \(kind)) needs every node at schema \(needs) or newer, but \(list) "
            + "still serve: upgrade or stop them first (a stopped node is forgotten after 90 s), then run `gatehouse migrate`. "
            + "`gatehouse migrate --check` shows the plan."
    }
}
