import Synchronization

/// Where a PostgreSQL lease stands: still waiting for the pool, handed a connection, or given up by
/// the watch. One atomic changed only by compare-and-exchange, so exactly one of the hand-over and
/// the give-up wins: a given-up lease never runs its work, and a handed-over one is never cancelled
/// by the watch. (Two flags, checked and then acted on, left a window where the watch cancelled work
/// the pool had just handed over, cutting off a statement or a commit.)
final class LeaseState: Sendable {
    private static let waiting: UInt8 = 0
    private static let handedOver: UInt8 = 1
    private static let givenUp: UInt8 = 2

    private let state = Atomic<UInt8>(LeaseState.waiting)

    /// Claims the lease for the work; false when the watch gave it up first.
    func hand() -> Bool {
        state.compareExchange(expected: Self.waiting, desired: Self.handedOver, ordering: .sequentiallyConsistent)
            .exchanged
    }

    /// Gives the lease up; false when the connection was handed over first.
    func giveUp() -> Bool {
        state.compareExchange(expected: Self.waiting, desired: Self.givenUp, ordering: .sequentiallyConsistent)
            .exchanged
    }

    var isHanded: Bool { state.load(ordering: .sequentiallyConsistent) == Self.handedOver }
    var isGivenUp: Bool { state.load(ordering: .sequentiallyConsistent) == Self.givenUp }
}
