import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fixed set of threads for CPU-heavy hashing, off the event loops and off Swift's cooperative pool,
/// so that a login flood cannot starve token refreshes. The queue is bounded: past `maxQueued` waiting
/// jobs a caller is refused at once (the server answers 503 + `Retry-After`) instead of queueing forever.
/// On Linux the hashing threads run under `SCHED_IDLE`: the kernel runs them only on CPU that nothing
/// else wants, and a request thread that wakes takes the core from a hash at once. At nice +10 (until
/// issue 35) a hash kept its core for a scheduler slice at every wake-up of a request's threads, and
/// closed-loop refreshes lost about half their throughput and doubled their p99 to a login flood.
/// When nothing else runs, hashing still gets every core; when token work saturates the machine,
/// logins wait in the bounded queue (then 503) rather than slowing every token request.
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

    /// SCHED_IDLE for the calling thread only: on Linux the policy is per thread, and pid 0 names the
    /// calling thread (sched_setscheduler(2)). One syscall, repeated per job because NIOThreadPool
    /// offers no per-thread start hook; it costs about a microsecond against a hash of ~20 ms.
    /// `SCHED_IDLE` (5) is behind `_GNU_SOURCE` in `<bits/sched.h>`, which the Glibc module does not
    /// define, hence the number. Where the policy is refused, nice +10 is the fallback.
    private static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
            var parameters = sched_param(sched_priority: 0)
            if sched_setscheduler(0, Self.idlePolicy, &parameters) != 0 {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            }
        #endif
    }

    /// Linux's `SCHED_IDLE`.
    public static let idlePolicy: Int32 = 5

    /// Jobs running or waiting now.
    public var load: Int { inFlight.withLock { $0 } }

    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
