import Dispatch
import NIOCore
import NIOPosix
import Synchronization

/// Every PostgreSQL lease still waiting for the pool, checked by one event-loop timer for all of them.
/// A timer per lease had to be scheduled and cancelled from the request's thread for every read and
/// transaction; registering here takes a lock. The whole lease costs 5–8 % of a PostgreSQL read's CPU,
/// most of it the lease's own task; this watch took back a few per cent (`docs/benchmarks.md`). The
/// timer runs only while some lease waits, every tenth of the wait, so a lease is given up between one
/// and 1.1 waits after its check was due.
///
/// The rule of each check is ``PostgresLease``'s: a lease whose wait is over is given up when the storage
/// is failing, or at its third check when no statement succeeded meanwhile; one that saw others served
/// (a busy pool, not an outage) waits another round.
final class LeaseWatch: Sendable {
    private struct Waiting {
        var due: UInt64
        var since: UInt64
        var checks: Int
        let giveUp: @Sendable () -> Void
    }

    private struct State {
        var waiting: [UInt64: Waiting] = [:]
        var next: UInt64 = 0
        var sweeping = false
    }

    private let state = Mutex(State())
    private let wait: UInt64
    private let lastSuccess: @Sendable () -> UInt64
    private let failing: @Sendable () -> Bool

    /// - Parameters:
    ///   - lastSuccess: when a statement last succeeded, in uptime nanoseconds.
    ///   - failing: whether the storage is in a fault episode.
    init(wait: TimeAmount, lastSuccess: @escaping @Sendable () -> UInt64, failing: @escaping @Sendable () -> Bool) {
        self.wait = UInt64(max(1, wait.nanoseconds))
        self.lastSuccess = lastSuccess
        self.failing = failing
    }

    /// Watches a lease from now; `giveUp` runs (once, off the lock) if it is given up. Answers the
    /// ticket to pass to ``handed(_:)``.
    func watch(now: UInt64 = DispatchTime.now().uptimeNanoseconds, _ giveUp: @escaping @Sendable () -> Void) -> UInt64 {
        let (ticket, start) = state.withLock { state -> (UInt64, Bool) in
            state.next += 1
            state.waiting[state.next] = Waiting(due: now + wait, since: lastSuccess(), checks: 1, giveUp: giveUp)
            guard !state.sweeping else { return (state.next, false) }
            state.sweeping = true
            return (state.next, true)
        }
        if start { startSweeping() }
        return ticket
    }

    /// The lease got its connection (or ended): it is no longer watched.
    func handed(_ ticket: UInt64) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ticket) }
    }

    /// Leases watched now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// Checks every lease whose check is due at `now`; answers whether any is still watched (the timer
    /// stops when none is, and the next ``watch(now:_:)`` starts it again).
    @discardableResult
    func sweep(now: UInt64) -> Bool {
        let (given, remaining) = state.withLock { state -> ([@Sendable () -> Void], Bool) in
            var given: [@Sendable () -> Void] = []
            let success = lastSuccess()
            var failingNow: Bool?
            for (ticket, var lease) in state.waiting where now >= lease.due {
                if success > lease.since {
                    lease.since = success
                } else {
                    if failingNow == nil { failingNow = failing() }
                    if failingNow == true || lease.checks >= 3 {
                        state.waiting.removeValue(forKey: ticket)
                        given.append(lease.giveUp)
                        continue
                    }
                }
                lease.checks += 1
                lease.due = now + wait
                state.waiting[ticket] = lease
            }
            if state.waiting.isEmpty { state.sweeping = false }
            return (given, !state.waiting.isEmpty)
        }
        for giveUp in given { giveUp() }
        return remaining
    }

    private func startSweeping() {
        let period = TimeAmount.nanoseconds(Int64(max(1, wait / 10)))
        MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(initialDelay: period, delay: period) { [self] task in
            if !sweep(now: DispatchTime.now().uptimeNanoseconds) { task.cancel() }
        }
    }
}
