import Foundation

/// Runs a helper program (a browser driver, a second SDK process) to completion without blocking a
/// concurrency thread, and hands back its exit status and combined output.
public enum Subprocess {
    public static func run(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read to EOF on a plain thread: the pipe must be drained or a chatty child blocks.
        let output = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            }
        }
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return (process.terminationStatus, output)
    }
}
