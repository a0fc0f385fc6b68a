import Foundation

/// Runs a helper program (a browser driver, a second SDK process) to completion without blocking a
/// concurrency thread, and hands back its exit status and combined output.
public enum Subprocess {
    public static func run(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let name = ([executable.lastPathComponent] + arguments.prefix(2).map { URL(fileURLWithPath: $0).lastPathComponent }).joined(
            separator: " ")
        return try await HangWatch.track("subprocess \(name)") { try await runUntracked(executable, arguments) }
    }

    private static func runUntracked(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try await launch(process)
        // Read to EOF on a thread of its own: the pipe must be drained or a chatty child blocks.
        let reader = pipe.fileHandleForReading
        let output = await BlockingWork.run { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) }
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return (process.terminationStatus, output)
    }

    /// Starts `process` once this test process has fewer than 1,000 descriptors open (waiting up to
    /// 20 s for parallel tests to close theirs). swift-corelibs-foundation's `Process.run()` reads
    /// `/proc/self/fd` with a 256-byte over-read per entry (swiftlang/swift-corelibs-foundation#5472,
    /// fixed after Swift 6.3.1): with some 1,350 descriptors open, the last entry of glibc's 32 KiB
    /// readdir buffer can sit before an unmapped page, and the launch crashes the whole test binary.
    /// Reads up to the first newline on a background thread, so no concurrency thread blocks.
    public static func firstLine(_ handle: FileHandle) async -> String? {
        await BlockingWork.run {
            var data = Data()
            while !data.contains(10) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            let line = data.split(separator: 10, omittingEmptySubsequences: false).first
            return line.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// A short helper's standard output, trimmed, or nil when it exits with another status than 0;
    /// its standard error passes through to the test log. Launched like every child here (see
    /// `launch`), read and waited for on a thread of its own.
    public static func standardOutput(_ executable: String, _ arguments: [String]) async throws -> String? {
        try await HangWatch.track("subprocess \(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.first ?? "")") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.standardError
            try await launch(process)
            let reader = out.fileHandleForReading
            let data = await BlockingWork.run { reader.readDataToEndOfFile() }
            while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
            guard process.terminationStatus == 0 else { return nil }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    public static func launch(_ process: Process) async throws {
        for _ in 0..<400 {
            guard let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count, open > 1000 else { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        try withSignalsUnblocked { try process.run() }
    }

    /// A child starts with the signal mask of the thread that spawned it, and Swift concurrency runs
    /// on libdispatch's worker threads, which block nearly every signal. Started from a test, a Python
    /// receiver had SIGTERM blocked: `terminate()` did nothing, it outlived its test, and it held the
    /// write end of another test's pipe it had inherited in the moment between that pipe's creation and
    /// its own spawn, so that test's read to the end (QR-1's `zbarimg`) never ended. The mask is
    /// emptied for the spawn and put back at once.
    private static func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t()
        var previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}

extension Subprocess {
    /// An executable this package built (`gatehouse`, `gatehouse-example`): beside the test bundle,
    /// one folder up, or in `.build/debug`.
    public static func builtProduct(_ name: String, filePath: String = #filePath) -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [beside, beside.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/\(name)")
    }
}
