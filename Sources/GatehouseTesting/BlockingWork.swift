import Foundation

/// Blocking work (reading a child's pipe to its end, waiting for a process) on a thread of its own.
///
/// Not `DispatchQueue.global()`: on Linux its threads are few (about one per core) and are the same
/// worker threads Swift concurrency runs on, so a subprocess read that blocks for a minute (a browser
/// walk, the conformance plans) took a whole core's worth of test threads away; with two such reads a
/// hooked sign-up with a 300 ms timeout waited 30 s for a thread to resume on (H-3).
enum BlockingWork {
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = "gatehouse-testing-blocking"
            thread.start()
        }
    }
}
