import Dispatch
import GatehouseCore
import Logging
import PostgresNIO
import Synchronization

/// Whether the storage is in a fault episode. The first failure logs one error line with its code;
/// the episode lasts until writes have committed for `quiet` seconds with no failure in between (a
/// nearly full disk lets some writes through and fails the next, which is one episode, not many), and
/// its end is logged once.
final class StorageHealth: Sendable {
    private struct Episode {
        var code: String
        var since: ContinuousClock.Instant
        var lastFailure: ContinuousClock.Instant
        var failures: Int
    }

    private let episode = Mutex<Episode?>(nil)
    /// When a statement last succeeded (uptime nanoseconds): a PostgreSQL lease that waited while
    /// others were served is congestion, not an outage.
    private let succeeded = Atomic<UInt64>(0)
    /// Read on every commit: a relaxed load is all a healthy server pays.
    private let faulted = Atomic<Bool>(false)
    private let quiet: Duration
    private let logger: Logger

    init(logger: Logger, quiet: Duration = .seconds(5)) {
        self.logger = logger
        self.quiet = quiet
    }

    /// Whether a failure was seen less than `quiet` ago: readiness says no even when its own write got
    /// through.
    var failing: Bool {
        guard faulted.load(ordering: .relaxed) else { return false }
        return episode.withLock { $0.map { ContinuousClock.now - $0.lastFailure < quiet } ?? false }
    }

    /// `error` as the callers should see it: a storage fault becomes 503 with `Retry-After`; anything
    /// else is passed on unchanged.
    func translate(_ error: any Error) -> any Error {
        if StorageFaults.isConflict(error) {
            // Not a fault episode: readiness stays up. Logged, since it means a lock order was missed.
            logger.warning("transaction ended by a conflict with another: answered 503", metadata: ["detail": "\(Self.detail(error))"])
            return GatehouseError.busy(retryAfter: 1)
        }
        guard let code = StorageFaults.code(of: error) else { return error }
        let now = ContinuousClock.now
        let first = episode.withLock { episode -> Bool in
            guard episode != nil else {
                episode = Episode(code: code, since: now, lastFailure: now, failures: 1)
                return true
            }
            episode?.failures += 1
            episode?.lastFailure = now
            return false
        }
        if first {
            faulted.store(true, ordering: .relaxed)
            // The driver's message names the condition (disk full, read-only, connection refused); it
            // carries no query text or values for these codes.
            logger.error(
                "storage unavailable: requests answer 503 until it recovers",
                metadata: ["storage_error": "\(code)", "detail": "\(Self.detail(error))"])
        }
        return GatehouseError.storageUnavailable(cause: error)
    }

    var lastSuccess: UInt64 { succeeded.load(ordering: .relaxed) }

    /// A read answered.
    func answered() {
        succeeded.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// A write committed: an episode, if one was under way and has been quiet long enough, is over.
    func committed() {
        answered()
        guard faulted.load(ordering: .relaxed) else { return }
        let now = ContinuousClock.now
        let ended = episode.withLock { episode -> Episode? in
            guard let current = episode, now - current.lastFailure >= quiet else { return nil }
            episode = nil
            return current
        }
        guard let ended else { return }
        faulted.store(false, ordering: .relaxed)
        logger.notice(
            "storage recovered",
            metadata: [
                "storage_error": "\(ended.code)", "failed_requests": "\(ended.failures)",
                "seconds": "\((now - ended.since).components.seconds)",
            ])
    }

    private static func detail(_ error: any Error) -> String {
        switch error {
        case let error as SQLiteStatementError: error.message
        case let error as PSQLError: error.serverInfo?[.message] ?? "\(error.code)"
        default: "\(error)"
        }
    }
}
