import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock on a file (`flock`), shared by every process that opens the same path: an app
/// and its extensions, or two processes on one file store, take turns refreshing.
enum FileLock {
    static func withExclusiveAccess<T: Sendable>(at url: URL, _ body: @Sendable () async throws -> T) async throws -> T {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(url.path, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission) }
        defer { close(descriptor) }
        // Poll a non-blocking lock so no thread of the cooperative pool blocks in flock.
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}
