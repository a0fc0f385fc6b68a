import Foundation
import SQLKit

/// A running node as it last said so (`cluster_nodes`, written every 30 s by each node of a release
/// with rolling upgrades; nodes of older releases are not seen).
public struct ClusterNode: Sendable, Equatable {
    public var id: String
    public var schemaVersion: Int
    public var host: String
    public var startedAt: Date
    public var seenAt: Date
}

extension SQLPersistence {
    /// A node not heard from for this long is taken for gone (three missed heartbeats).
    public static let nodeLiveness: TimeInterval = 90

    /// This release's schema: what its nodes say they run.
    public static var schemaVersion: Int { Migrations.all.last!.version }

    /// Says this node is alive and which schema it runs.
    public func heartbeat(node id: UUID, host: String, startedAt: Date, now: Date) async throws {
        try await transactionOnDatabase { db in
            try await db.raw(
                """
                INSERT INTO cluster_nodes (id, schema_version, host, started_at, seen_at)
                VALUES (\(bind: Columns.id(id)), \(bind: Self.schemaVersion), \(bind: host), \(bind: Columns.millis(startedAt)), \(bind: Columns.millis(now)))
                ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, schema_version = excluded.schema_version
                """
            ).run()
            // Rows of nodes long gone (killed, never said goodbye) would otherwise stay forever.
            try await db.raw("DELETE FROM cluster_nodes WHERE seen_at < \(bind: Columns.millis(now.addingTimeInterval(-86_400)))").run()
        }
    }

    /// A node shutting down says goodbye, so a migration waiting for it need not wait 90 s.
    public func leave(node id: UUID) async throws {
        try await transactionOnDatabase { db in
            try await db.raw("DELETE FROM cluster_nodes WHERE id = \(bind: Columns.id(id))").run()
        }
    }

    /// Whether every node heard from within ``nodeLiveness`` runs a schema with refresh chains: a node
    /// of an older release refreshes only token rows (`RefreshChainGate`).
    public func refreshChainsAllowed(now: Date) async throws -> Bool {
        let nodes = try await readDatabase { try await Self.liveNodes($0, now: now) }
        return nodes.allSatisfy { $0.schemaVersion >= Migrations.refreshChains.version }
    }

    /// Nodes heard from within ``nodeLiveness``, oldest schema first.
    static func liveNodes(_ db: any SQLDatabase, now: Date) async throws -> [ClusterNode] {
        try await db.raw(
            """
            SELECT id, schema_version, host, started_at, seen_at FROM cluster_nodes
            WHERE seen_at >= \(bind: Columns.millis(now.addingTimeInterval(-nodeLiveness))) ORDER BY schema_version, started_at
            """
        ).all().map {
            ClusterNode(
                id: try $0.string("id"), schemaVersion: try $0.int("schema_version"), host: try $0.string("host"),
                startedAt: try $0.date("started_at"), seenAt: try $0.date("seen_at"))
        }
    }
}
