import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// A connection from the pool within a bounded wait. PostgresNIO's pool queues a request while it
/// cannot connect until its circuit breaker trips (tens of seconds): a client would hang that long on
/// a stopped database. Only the wait for the lease is bounded; once the connection is handed over the
/// work runs to its end, so a commit is never cut off between the database and the answer. A wait
/// is given up after `wait` when the storage is known to be failing (a statement failed a moment
/// ago), and after three times `wait` when nothing reached the database meanwhile; a pool that is
/// busy (serving others) or slow to connect under load keeps its queue.
/// (No listed package bounds a pool lease. A task group racing a `Task.sleep` cost about 80 µs of CPU
/// per request on `/v1/me`; one task and an event-loop timer cost a fraction of that.)
enum PostgresLease {
    private final class Handed: Sendable {
        let value = Atomic<Bool>(false)
    }

    static func with<R: Sendable>(
        _ client: PostgresClient, wait: TimeAmount, progress: StorageHealth,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let handed = Handed()
        let work = Task {
            try await client.withConnection { connection in
                handed.value.store(true, ordering: .releasing)
                return try await body(connection)
            }
        }
        let timer = Timer()
        timer.arm(after: wait, since: progress.lastSuccess, tick: 1) { since, tick in
            guard !handed.value.load(ordering: .acquiring) else { return .done }
            if progress.lastSuccess > since { return .again(progress.lastSuccess) }
            guard progress.failing || tick >= 3 else { return .again(since) }
            work.cancel()
            return .done
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch {
            // Cancelled while still waiting for the pool, by the timer rather than by the caller.
            if !handed.value.load(ordering: .acquiring), !Task.isCancelled { throw LeaseTimedOut() }
            throw error
        }
    }

    /// An event-loop timer that may re-arm itself; cancelled once the work is done.
    private final class Timer: Sendable {
        enum Next {
            case done
            case again(UInt64)
        }

        private let scheduled = Mutex<Scheduled<Void>?>(nil)
        private let cancelled = Atomic<Bool>(false)

        func arm(after wait: TimeAmount, since: UInt64, tick: Int, _ fire: @escaping @Sendable (UInt64, Int) -> Next) {
            let task = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: wait) { [self] in
                guard !cancelled.load(ordering: .relaxed) else { return }
                if case .again(let mark) = fire(since, tick) { arm(after: wait, since: mark, tick: tick + 1, fire) }
            }
            scheduled.withLock { $0 = task }
        }

        func cancel() {
            cancelled.store(true, ordering: .relaxed)
            scheduled.withLock { $0?.cancel() }
        }
    }
}
