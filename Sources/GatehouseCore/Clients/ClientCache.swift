import Foundation
import Synchronization

/// Client records for a second. Nearly every request names its client, and reading it (and decoding
/// its settings) from the database each time was the largest single cost of an introspection. A short
/// lifetime keeps a `clients update` run on another node or from the CLI effective within a second;
/// changes made through this node's ``ClientAdmin`` drop the entry at once. Unknown ids are not cached,
/// so random ids cannot grow it. (No listed package offers a small TTL cache.)
public final class ClientCache: Sendable {
    private struct Entry {
        let client: ClientRecord
        let expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let loadCount = Atomic<Int>(0)
    private let ttl: Duration
    private let maxEntries: Int

    /// How many times a record was read from the database (a miss or an expired entry): what a
    /// statement count of a request path subtracts, as the cache expires on wall time.
    public var loads: Int { loadCount.load(ordering: .relaxed) }

    public init(ttl: Duration = .seconds(1), maxEntries: Int = 1024) {
        self.ttl = ttl
        self.maxEntries = maxEntries
    }

    /// The cached record, or the one `load` reads (cached when found).
    func client(id: String, load: () async throws -> ClientRecord?) async rethrows -> ClientRecord? {
        let now = ContinuousClock.now
        if let hit = entries.withLock({ $0[id] }), hit.expires > now { return hit.client }
        loadCount.add(1, ordering: .relaxed)
        guard let loaded = try await load() else { return nil }
        entries.withLock { entries in
            if entries.count >= maxEntries { entries.removeAll(keepingCapacity: true) }
            entries[id] = Entry(client: loaded, expires: now + ttl)
        }
        return loaded
    }

    func invalidate(id: String) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
