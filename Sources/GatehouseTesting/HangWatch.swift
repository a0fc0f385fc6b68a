import Foundation
import Synchronization
import Testing

/// Names what a test is waiting for when it waits too long. The whole suite hung now and then (a test
/// that never finished, every task suspended): a watch thread prints each tracked step (a request, a
/// mail round, a server's start or shutdown) still running after three minutes (the whole suite takes about two and a half), so a hung CI log says where.
/// A thread, not a task: it must report even when no task can run.
public enum HangWatch {
    private struct Entry {
        let label: String
        let started: ContinuousClock.Instant
        var reported = false
    }

    private static let entries = Mutex<[Int: Entry]>([:])
    private static let counter = Atomic<Int>(0)
    /// `GATEHOUSE_HANG_WATCH_SECONDS` changes it (to see the watch work).
    private static let threshold: Duration = .seconds(
        Int(ProcessInfo.processInfo.environment["GATEHOUSE_HANG_WATCH_SECONDS"] ?? "") ?? 180)
    /// Started once, on first use; the value only marks that it was.
    private static let watcher: Bool = {
        let thread = Thread {
            while true {
                Thread.sleep(forTimeInterval: min(10, Double(threshold.components.seconds) / 2))
                report()
            }
        }
        thread.name = "gatehouse-hang-watch"
        thread.start()
        return true
    }()

    /// Runs `body`, tracked under `label` while it runs.
    public static func track<T>(_ label: @autoclosure () -> String, _ body: () async throws -> T) async rethrows -> T {
        _ = watcher
        let id = counter.add(1, ordering: .relaxed).newValue
        let test = Test.current.map { " [\($0.displayName ?? $0.name)]" } ?? ""
        let entry = Entry(label: label() + test, started: .now)
        entries.withLock { $0[id] = entry }
        defer { _ = entries.withLock { $0.removeValue(forKey: id) } }
        return try await body()
    }

    private static func report() {
        let now = ContinuousClock.Instant.now
        let late = entries.withLock { entries -> [(String, Duration)] in
            var late: [(String, Duration)] = []
            for (id, entry) in entries where !entry.reported && now - entry.started > threshold {
                entries[id]?.reported = true
                late.append((entry.label, now - entry.started))
            }
            return late
        }
        guard !late.isEmpty else { return }
        let inFlight = entries.withLock { $0.count }
        for (label, waited) in late {
            let seconds = waited.components.seconds
            FileHandle.standardError.write(
                Data("HANG-WATCH: still waiting after \(seconds) s: \(label) (\(inFlight) tracked steps in flight)\n".utf8))
        }
    }
}
