import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory lock on a file (`flock`), shared by every process that opens the same path: an app
/// and its extensions, or two processes on one file store, take turns refreshing.
///
/// On iOS a process suspended while it holds a lock on a file in an app group's shared container is
/// terminated by the system (0xdead10cc); the lock is held for one refresh request, so an app that
/// puts the lock there should let a refresh finish before it is suspended (a background task).
enum FileLock {
    /// How long to wait for another process before giving up with a retryable error: a process that
    /// hangs while holding the lock must not stall every other one forever.
    static let maximumWait: TimeInterval = 30

    static func withExclusiveAccess<T: Sendable>(at url: URL, _ body: @Sendable () async throws -> T) async throws -> T {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Close-on-exec: a child process started meanwhile must not inherit, and so hold, the lock.
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission) }
        defer { close(descriptor) }
        // Poll a non-blocking lock so no thread of the cooperative pool blocks in flock.
        let deadline = Date().addingTimeInterval(maximumWait)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else { throw FileLockTimeout(path: url.path) }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}

/// Another process held the session store's lock for over 30 seconds; ``AuthClient`` reports it as
/// the retryable `store_unavailable`.
struct FileLockTimeout: Error, Sendable, CustomStringConvertible {
    let path: String
    var description: String { "another process held the lock \(path) for over 30 s" }
}
