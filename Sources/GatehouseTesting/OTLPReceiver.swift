import Foundation

/// `scripts/otlp-receiver.py`: an OpenTelemetry collector stand-in that checks every body against
/// opentelemetry-proto's schema and keeps the spans it accepted (and what it refused).
public final class OTLPReceiver: Sendable {
    public let port: Int
    let output: URL
    let process: Process

    /// The interpreter when it can import opentelemetry-proto (installed with pip once if missing);
    /// nil otherwise, and CI (`CI` set) throws instead of skipping.
    public static func python() async throws -> URL? {
        guard case .success(let python) = await SinkEnvironment.python.value else { return try unavailable("no python3") }
        let probe = ["-c", "import opentelemetry.proto.collector.trace.v1.trace_service_pb2"]
        if await SinkEnvironment.run(python, probe) == 0 { return python }
        _ = await SinkEnvironment.run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "opentelemetry-proto"])
        if await SinkEnvironment.run(python, probe) == 0 { return python }
        return try unavailable("opentelemetry-proto cannot be imported or installed")
    }

    private static func unavailable(_ reason: String) throws -> URL? {
        if ProcessInfo.processInfo.environment["CI"].map({ !$0.isEmpty && $0 != "0" && $0 != "false" }) ?? false {
            throw SinkUnavailable(message: "the OTLP receiver cannot run: \(reason)")
        }
        print("OTLP receiver unavailable (\(reason)): the tracing test is skipped")
        return nil
    }

    public static func start(python: URL) async throws -> OTLPReceiver {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString).jsonl")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = python
        process.arguments = [
            SinkEnvironment.script.deletingLastPathComponent().appendingPathComponent("otlp-receiver.py").path, output.path,
        ]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try await Subprocess.launch(process)
        guard let line = await Subprocess.firstLine(stdout.fileHandleForReading), let port = Int(line) else {
            process.terminate()
            throw SinkUnavailable(message: "the OTLP receiver did not start")
        }
        return OTLPReceiver(port: port, output: output, process: process)
    }

    init(port: Int, output: URL, process: Process) {
        self.port = port
        self.output = output
        self.process = process
    }

    /// Every line so far: accepted spans (OTLP JSON, ids in hex, plus `service`), or `{"refused": …}`.
    public func lines() -> [[String: Any]] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    public func stop() {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: output)
    }
}
