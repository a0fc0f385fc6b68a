import Argon2
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fixed set of threads for CPU-heavy hashing, off the event loops and off Swift's cooperative pool,
/// so that a login flood cannot starve token refreshes. The queue is bounded: past `maxQueued` waiting
/// jobs a caller is refused at once (the server answers 503 + `Retry-After`) instead of queueing forever.
/// On Linux the hashing threads also run at a lower scheduling priority (nice +10), so that when a
/// login storm keeps every core busy, the kernel still runs short requests (refreshes, API calls)
/// first; hashing gets whatever CPU is left, which when nothing else runs is all of it.
///
/// Each running hash holds an ``Argon2/Workspace``: its 19 MiB stay mapped from one hash to the next
/// while hashes keep coming (a fresh mapping per hash had the kernel zero-fill every page, a third of
/// a login's CPU), and one left unused for ``workspaceIdle`` gives its memory back, so RSS after a
/// login flood returns to what the rest of the server holds.
public final class HashingPool: Sendable {
    private let pool: NIOThreadPool
    private let inFlight = Mutex(0)
    /// Workspaces not in use, with when each was last put back; at most one per thread.
    private let idle = Mutex<[(workspace: Argon2.Workspace, since: ContinuousClock.Instant)]>([])
    private let trimmer = Mutex<Task<Void, Never>?>(nil)
    public let threads: Int
    public let maxQueued: Int
    /// How long a workspace keeps its memory unused.
    public static let workspaceIdle: Duration = .seconds(10)

    public init(threads: Int, maxQueued: Int) {
        self.threads = max(1, threads)
        self.maxQueued = max(0, maxQueued)
        self.pool = NIOThreadPool(numberOfThreads: self.threads)
        pool.start()
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: HashingPool.workspaceIdle / 2)
                guard let self else { return }
                self.trim(olderThan: HashingPool.workspaceIdle)
            }
        }
        trimmer.withLock { $0 = task }
    }

    deinit { trimmer.withLock { $0?.cancel() } }

    /// Thrown when the queue is full.
    public struct Saturated: Error {}

    /// The pool whose place the current task holds (``withPlace(_:)``): its hashes use that place.
    @TaskLocal private static var heldPlace: ObjectIdentifier?

    /// Runs `body` holding one place in this pool, taken before `body` starts: a caller the pool has no
    /// room for is refused at once, before it has counted, read or written anything, and the hashes
    /// `body` runs (one at a time) use this place instead of queueing for another.
    public func withPlace<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard admit() else { throw Saturated() }
        defer { leave() }
        return try await Self.$heldPlace.withValue(ObjectIdentifier(self)) { try await body() }
    }

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let holdsPlace = Self.heldPlace == ObjectIdentifier(self)
        if !holdsPlace {
            guard admit() else { throw Saturated() }
        }
        defer { if !holdsPlace { leave() } }
        return try await pool.runIfActive {
            Self.lowerPriorityOfCurrentThread()
            return try work()
        }
    }

    /// Runs a hash with a workspace of this pool (kept from the last hash on any of its threads).
    public func runHashing<T: Sendable>(_ work: @escaping @Sendable (Argon2.Workspace) throws -> T) async throws -> T {
        try await run {
            let workspace = self.idle.withLock { $0.popLast()?.workspace } ?? Argon2.Workspace()
            defer { self.idle.withLock { $0.append((workspace, ContinuousClock.now)) } }
            return try work(workspace)
        }
    }

    /// Gives back the memory of workspaces unused for `age`; answers the bytes still kept.
    @discardableResult
    public func trim(olderThan age: Duration) -> Int {
        let now = ContinuousClock.now
        return idle.withLock { list in
            for entry in list where now - entry.since >= age { entry.workspace.release() }
            return list.reduce(0) { $0 + $1.workspace.retainedBytes }
        }
    }

    /// Nice +10 for the calling thread only: on Linux the nice value is per thread, and `who = 0`
    /// names the calling thread, not the whole process (setpriority(2), NOTES). One syscall,
    /// repeated per job because NIOThreadPool offers no per-thread start hook; it costs about a
    /// microsecond against a hash of ~20 ms.
    private static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }

    private func admit() -> Bool {
        inFlight.withLock { count -> Bool in
            guard count < threads + maxQueued else { return false }
            count += 1
            return true
        }
    }

    private func leave() { inFlight.withLock { $0 -= 1 } }

    /// Places taken now: jobs running or waiting, and sign-ins holding a place for theirs.
    public var load: Int { inFlight.withLock { $0 } }

    public func shutdown() async {
        trimmer.withLock { $0?.cancel() }
        try? await pool.shutdownGracefully()
        trim(olderThan: .zero)
    }
}
