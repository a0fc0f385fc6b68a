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
public final class HashingPool: Sendable {
    private let pool: NIOThreadPool
    private let inFlight = Mutex(0)
    public let threads: Int
    public let maxQueued: Int

    public init(threads: Int, maxQueued: Int) {
        self.threads = max(1, threads)
        self.maxQueued = max(0, maxQueued)
        self.pool = NIOThreadPool(numberOfThreads: self.threads)
        pool.start()
    }

    /// Thrown when the queue is full.
    public struct Saturated: Error {}

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let admitted = inFlight.withLock { count -> Bool in
            guard count < threads + maxQueued else { return false }
            count += 1
            return true
        }
        guard admitted else { throw Saturated() }
        defer { inFlight.withLock { $0 -= 1 } }
        return try await pool.runIfActive {
            Self.lowerPriorityOfCurrentThread()
            return try work()
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

    /// Jobs running or waiting now.
    public var load: Int { inFlight.withLock { $0 } }

    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
