import Foundation
import GatehouseCore
import Synchronization

/// Every port of ``Persistence`` over plain values in memory, so flows can be tested without a
/// database or HTTP. Transactions are serialized and all-or-nothing (they work on a copy that replaces
/// the committed state when the body returns); reads see the committed state. The store rules the
/// flows rely on are the SQL stores' (uniqueness, atomic claims, counters): the persistence contract
/// tests hold the SQL side to them.
public final class InMemoryPersistence: Persistence {
    private let committed = StateBox(InMemoryState())
    private let writer = AsyncLock()

    public init() {}

    public func read<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        try await body(InMemoryStores(box: committed))
    }

    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        await writer.lock()
        let working = StateBox(committed.snapshot())
        do {
            let result = try await body(InMemoryStores(box: working))
            committed.replace(with: working.snapshot())
            await writer.unlock()
            return result
        } catch {
            await writer.unlock()
            throw error
        }
    }

    /// The committed state, for tests that count what a flow wrote.
    func committedState() -> InMemoryState { committed.snapshot() }

    public func ping() async throws {}
    public func shutdown() async {}
}
