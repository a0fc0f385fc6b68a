import Logging
import SQLKit
import Synchronization

/// Group commit for SQLite's single writer. Transactions that arrive while one is running wait in a
/// FIFO; the next round runs all of them back to back inside one `BEGIN IMMEDIATE … COMMIT`, so one
/// fsync covers the whole batch instead of one per request. Callers are answered only after that
/// COMMIT, so a 2xx still means durable.
///
/// If any transaction in a batch throws, the batch is rolled back and each of its transactions runs
/// again on its own: one caller's failure never undoes or fails another's work, and the outcome is the
/// same as running them one after another. Transaction bodies therefore must touch only the database
/// (every store call does), since a body may run twice.
///
/// (No listed package offers group commit over sqlite-nio; this replaces a FIFO async lock.)
final class SQLiteWriteQueue: Sendable {
    /// A queued transaction with its caller's continuation captured inside `execute`/`fail`, so the
    /// queue handles jobs of any result type without casts.
    private struct Job: Sendable {
        /// Runs the body; returns the thunk that answers the caller once the batch has committed.
        let execute: @Sendable (any SQLDatabase) async throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var pending: [Job] = []
        var draining = false
    }

    private let state = Mutex(State())
    private let db: any SQLDatabase
    private let begin: String
    private let maxBatch: Int
    private let logger: Logger

    init(db: any SQLDatabase, begin: String, maxBatch: Int = 128, logger: Logger) {
        self.db = db
        self.begin = begin
        self.maxBatch = max(1, maxBatch)
        self.logger = logger
    }

    func run<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let job = Job(
                execute: { db in
                    let result = try await body(db)
                    return { continuation.resume(returning: result) }
                },
                fail: { continuation.resume(throwing: $0) })
            let startDraining = state.withLock { state -> Bool in
                state.pending.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startDraining { Task { await self.drain() } }
        }
    }

    /// One drainer at a time: it owns the writer connection until the queue is empty.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Job] in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    return []
                }
                let count = min(maxBatch, state.pending.count)
                let batch = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                return batch
            }
            guard !batch.isEmpty else { return }
            if batch.count == 1 {
                await runAlone(batch[0])
            } else {
                await runBatch(batch)
            }
        }
    }

    private func runBatch(_ batch: [Job]) async {
        var answers: [@Sendable () -> Void] = []
        answers.reserveCapacity(batch.count)
        do {
            try await db.raw(SQLQueryString(begin)).run()
        } catch {
            for job in batch { job.fail(error) }
            return
        }
        do {
            for job in batch { answers.append(try await job.execute(db)) }
            try await db.raw("COMMIT").run()
        } catch {
            await rollback()
            for job in batch { await runAlone(job) }
            return
        }
        for answer in answers { answer() }
    }

    private func runAlone(_ job: Job) async {
        do {
            try await db.raw(SQLQueryString(begin)).run()
        } catch {
            job.fail(error)
            return
        }
        let answer: @Sendable () -> Void
        do {
            answer = try await job.execute(db)
            try await db.raw("COMMIT").run()
        } catch {
            await rollback()
            job.fail(error)
            return
        }
        answer()
    }

    private func rollback() async {
        await Rollback.run(db, logger: logger)
    }
}
