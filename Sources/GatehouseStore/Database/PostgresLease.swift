import NIOCore
import PostgresNIO
import Synchronization

/// A connection from the pool within a bounded wait. PostgresNIO's pool queues a request while it
/// cannot connect until its circuit breaker trips (tens of seconds): a client would hang that long on
/// a stopped database. Only the wait for the lease is bounded; once the connection is handed over the
/// work runs to its end, so a commit is never cut off between the database and the answer. A wait
/// is given up after the watch's wait when the storage is known to be failing (a statement failed a
/// moment ago), and after three times that when nothing reached the database meanwhile; a pool that is
/// busy (serving others) or slow to connect under load keeps its queue (``LeaseWatch``).
/// (No listed package bounds a pool lease. A task group racing a `Task.sleep` cost about 80 µs of CPU
/// per request on `/v1/me`; a task of its own and a shared watch cost a fraction of that.)
enum PostgresLease {
    /// Where the lease stands, and the watch's ticket once known (0 before).
    private final class Lease: Sendable {
        let state = LeaseState()
        let ticket = Atomic<UInt64>(0)
    }

    static func with<R: Sendable>(
        _ client: PostgresClient, watch: LeaseWatch,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let lease = Lease()
        // The wait is the pool's, inside `withConnection`: only cancelling the task that waits ends it,
        // so the lease runs in a task of its own that the watch may cancel.
        let work = Task {
            try await client.withConnection { connection in
                // Given up the instant before: the caller has its answer already, so the work must not run.
                guard lease.state.hand() else { throw LeaseTimedOut() }
                let ticket = lease.ticket.load(ordering: .sequentiallyConsistent)
                if ticket != 0 { watch.handed(ticket) }
                return try await body(connection)
            }
        }
        let ticket = watch.watch {
            if lease.state.giveUp() { work.cancel() }
        }
        lease.ticket.store(ticket, ordering: .sequentiallyConsistent)
        // Either the task saw the ticket or this sees the hand-over: the watch forgets it at once.
        if lease.state.isHanded { watch.handed(ticket) }
        defer { watch.handed(ticket) }
        do {
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch {
            // Cancelled while still waiting for the pool, by the watch rather than by the caller.
            if lease.state.isGivenUp, !Task.isCancelled { throw LeaseTimedOut() }
            throw error
        }
    }
}
