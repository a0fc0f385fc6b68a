import Foundation

/// Finds `python3` with aiosmtpd for the tests that talk to a real SMTP server.
///
/// `GATEHOUSE_PYTHON` names the interpreter; otherwise the first `python3` on `PATH` is used. When
/// aiosmtpd cannot be imported, `python3 -m pip install aiosmtpd` is tried once per test run. If
/// that fails too the server tests are skipped with that reason, except under CI (`CI` set), where
/// a missing server must not pass silently and the condition throws instead.
public enum SinkEnvironment {
    /// The interpreter, once found and able to import aiosmtpd.
    public static let python: Task<Result<URL, SinkUnavailable>, Never> = Task {
        let result = await locate()
        if case .failure(let reason) = result {
            // Once per run, beside Swift Testing's own "skipped" lines.
            print("GatehouseSMTP server tests cannot run: \(reason.message)")
        }
        return result
    }

    /// For `.enabled(…)` traits: true when the sink can run.
    public static func isAvailable() async throws -> Bool {
        switch await python.value {
        case .success:
            return true
        case .failure(let reason):
            if ProcessInfo.processInfo.environment["CI"].map({ !$0.isEmpty && $0 != "0" && $0 != "false" }) ?? false {
                throw reason
            }
            return false
        }
    }

    /// `scripts/smtp-sink.py`, found from this file's path or `GATEHOUSE_SMTP_SINK`.
    public static var script: URL {
        if let path = ProcessInfo.processInfo.environment["GATEHOUSE_SMTP_SINK"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // GatehouseTesting
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("scripts/smtp-sink.py")
    }

    private static func locate() async -> Result<URL, SinkUnavailable> {
        let environment = ProcessInfo.processInfo.environment
        let candidates: [String]
        if let explicit = environment["GATEHOUSE_PYTHON"], !explicit.isEmpty {
            candidates = [explicit]
        } else {
            candidates = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
                .map { "\($0)/python3" }
        }
        guard let python = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .failure(SinkUnavailable(message: "no python3 found (set GATEHOUSE_PYTHON)"))
        }
        let url = URL(fileURLWithPath: python)
        guard FileManager.default.fileExists(atPath: script.path) else {
            return .failure(SinkUnavailable(message: "\(script.path) is missing"))
        }
        if await run(url, ["-c", "import aiosmtpd"]) == 0 { return .success(url) }
        _ = await run(url, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "aiosmtpd"])
        if await run(url, ["-c", "import aiosmtpd"]) == 0 { return .success(url) }
        return .failure(
            SinkUnavailable(message: "aiosmtpd is not importable by \(python) and pip could not install it"))
    }

    /// Runs a process to completion without blocking a concurrency thread; returns its exit status.
    public static func run(_ executable: URL, _ arguments: [String]) async -> Int32 {
        (try? await Subprocess.run(executable, arguments))?.status ?? -1
    }
}

public struct SinkUnavailable: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "SMTP sink unavailable: \(message)" }
}

/// One running `scripts/smtp-sink.py`, bound to a free port on 127.0.0.1 that it picked itself
/// (so parallel tests never race for a port).
public final class SMTPSink {
    public let port: Int
    public let directory: URL
    public var maildir: URL { directory.appendingPathComponent("mail") }
    public var certificatePath: String { directory.appendingPathComponent("tls/cert.pem").path }
    private let process: Process
    private let input: Pipe

    private init(port: Int, directory: URL, process: Process, input: Pipe) {
        self.port = port
        self.directory = directory
        self.process = process
        self.input = input
    }

    /// Starts a sink with `arguments`; with `tls` it first makes a self-signed certificate for
    /// `localhost`/127.0.0.1 and passes it as `--tls-cert/--tls-key`.
    public static func start(_ arguments: [String] = [], tls: Bool = false) async throws -> SMTPSink {
        guard case .success(let python) = await SinkEnvironment.python.value else {
            throw SinkUnavailable(message: "python3 with aiosmtpd was not found")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("smtp-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("mail"),
            withIntermediateDirectories: true
        )
        var arguments = arguments + ["--maildir", directory.appendingPathComponent("mail").path, "--exit-on-stdin-eof"]
        if tls {
            let tlsDirectory = directory.appendingPathComponent("tls").path
            let status = await SinkEnvironment.run(python, [SinkEnvironment.script.path, "--make-cert", tlsDirectory])
            guard status == 0 else { throw SinkUnavailable(message: "could not make a test certificate") }
            arguments += ["--tls-cert", "\(tlsDirectory)/cert.pem", "--tls-key", "\(tlsDirectory)/key.pem"]
        }

        let process = Process()
        process.executableURL = python
        process.arguments = [SinkEnvironment.script.path] + arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        // The sink's log (aiosmtpd's warnings, tracebacks) is kept for the failure message below.
        let logPath = directory.appendingPathComponent("sink.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath) ?? FileHandle.nullDevice
        try await Subprocess.launch(process)

        // If the ready line has not come in 20 s, kill the sink; the read below then sees EOF.
        let watchdog = Task { [pid = process.processIdentifier] in
            try await Task.sleep(for: .seconds(20))
            kill(pid, SIGKILL)
        }
        defer { watchdog.cancel() }
        let line = await Subprocess.firstLine(output.fileHandleForReading)
        let fields = line?.split(separator: " ") ?? []
        guard fields.count == 4, fields[0] == "SMTP-SINK", fields[1] == "READY", let port = Int(fields[3]) else {
            process.terminate()
            let log = (try? String(contentsOf: directory.appendingPathComponent("sink.log"), encoding: .utf8)) ?? ""
            throw SinkUnavailable(message: "the sink did not start: \(line ?? "no output")\n\(log)")
        }
        return SMTPSink(port: port, directory: directory, process: process, input: input)
    }

    /// Every message received so far, in arrival order.
    public func messages() throws -> [ReceivedMessage] {
        let files = try FileManager.default.contentsOfDirectory(atPath: maildir.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try files.map {
            try decoder.decode(ReceivedMessage.self, from: Data(contentsOf: maildir.appendingPathComponent($0)))
        }
    }

    /// Stops the sink and removes its files, polling for exit so no concurrency thread blocks
    /// (with two cores, a blocked thread stalls every other test).
    public func stop() async {
        if process.isRunning { process.terminate() }
        try? input.fileHandleForWriting.close()
        for _ in 0..<500 where process.isRunning {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

}

/// Runs `body` with a started sink and stops the sink afterwards, whatever happens.
public func withSink<T>(
    _ arguments: [String] = [],
    tls: Bool = false,
    _ body: (SMTPSink) async throws -> T
) async throws -> T {
    let sink = try await SMTPSink.start(arguments, tls: tls)
    do {
        let result = try await body(sink)
        await sink.stop()
        return result
    } catch {
        await sink.stop()
        throw error
    }
}

/// A message as the sink recorded it (see `describe` in scripts/smtp-sink.py).
public struct ReceivedMessage: Decodable, Sendable {
    public struct Address: Decodable, Equatable, Sendable {
        public var name: String
        public var address: String

        public init(name: String, address: String) {
            self.name = name
            self.address = address
        }
    }

    public struct Part: Decodable, Sendable {
        public var contentType: String
        public var charset: String?
        public var transferEncoding: String?
        public var content: String

        /// The decoded content with CRLF turned into LF, as it would be in a Swift string literal.
        public var text: String { content.replacing("\r\n", with: "\n") }
    }

    public struct Parsed: Decodable, Sendable {
        public var subject: String
        public var fromName: String?
        public var fromAddress: String?
        public var to: [Address]
        public var messageId: String?
        public var date: String?
        public var mimeVersion: String?
        public var contentType: String
        public var headers: [[String]]
        public var parts: [Part]
        public var defects: [String]
    }

    public var mailFrom: String
    public var rcptTos: [String]
    public var tls: Bool
    public var authenticatedAs: String?
    public var raw: String
    public var maxLineLength: Int
    public var bareLineFeeds: Int
    public var eightBit: Bool
    public var parsed: Parsed
}
