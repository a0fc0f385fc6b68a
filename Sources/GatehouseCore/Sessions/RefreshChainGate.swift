import Synchronization

/// Whether this node starts sessions on a refresh chain (one row per session, whatever its refreshes)
/// or with token rows as releases before schema 18 did. A node of an older release knows only rows, so
/// while one is alive beside this one on the same database a chain token it was handed would be
/// refused there; the node heartbeat closes the gate until every live node runs schema 18 or later.
/// Chain tokens already handed out refresh here whatever the gate says.
public final class RefreshChainGate: Sendable {
    private let open: Atomic<Bool>

    /// Open by default: a single node (and every test) has no older node beside it.
    public init(open: Bool = true) { self.open = Atomic(open) }

    public var isOpen: Bool { open.load(ordering: .relaxed) }

    public func set(open: Bool) { self.open.store(open, ordering: .relaxed) }
}
