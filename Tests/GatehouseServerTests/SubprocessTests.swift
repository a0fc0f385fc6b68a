import Foundation
import GatehouseTesting
import Testing

/// The test helpers' own children: what every browser, sink and receiver a test starts relies on.
@Suite("Test subprocesses")
struct SubprocessTests {
    #if os(Linux)
        @Test(
            "SP-1: a child started from a test blocks no signal, so terminate() ends it (a receiver once outlived its test with SIGTERM blocked)"
        )
        func childrenCanBeTerminated() async throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["600"]
            try await Subprocess.launch(process)
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
            let blocked = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
            #expect(blocked.map { $0.split(separator: "\t").last.map(String.init) } == "0000000000000000")
            process.terminate()
            _ = try await eventually { process.isRunning ? nil : true }
            #expect(!process.isRunning)
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        }
    #endif
}
