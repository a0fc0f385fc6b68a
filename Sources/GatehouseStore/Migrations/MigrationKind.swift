/// What a migration does to nodes that predate it, so upgrades can be rolling (docs/operations.md,
/// "Upgrades and migrations").
enum MigrationKind: Sendable, Equatable {
    /// Only adds (a table, a nullable or defaulted column, an index): nodes of any older version keep
    /// serving beside it, and `serve` applies it at start.
    case expand
    /// Removes or changes what nodes older than `nodesFrom` still use (the release that stopped
    /// using it has that schema version): applied only by `gatehouse migrate`, and only while no
    /// node older than that is alive.
    case contract(nodesFrom: Int)
    /// Cannot be made rolling: every node older than it must be stopped first.
    case breaking

    /// The oldest schema a node may know and still serve once this migration is applied (nil: any).
    func minimumNode(version: Int) -> Int? {
        switch self {
        case .expand: nil
        case .contract(let nodesFrom): nodesFrom
        case .breaking: version
        }
    }

    var label: String {
        switch self {
        case .expand: "expand"
        case .contract: "contract"
        case .breaking: "breaking"
        }
    }
}
