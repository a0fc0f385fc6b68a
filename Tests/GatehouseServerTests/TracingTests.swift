import Foundation
import GatehouseTesting
import Testing

/// Traces as an operator's collector receives them: the built `gatehouse serve` (tracing is set up
/// once per process, so not in this test process) exporting to a receiver that checks every body
/// against opentelemetry-proto, with a before-sign-up hook to call.
@Suite("Tracing")
struct TracingTests {
    @Test(
        "TR-1: a sign-up whose request carries a traceparent continues that trace, and a sign-in without one starts one: its server span, a span per database transaction and the hook call's client span reach an OTLP receiver (checked against opentelemetry-proto), the hook receives the call's traceparent, a webhook delivery sends its own span's traceparent, and the JSON log line of the request names the trace"
    )
    func signUpTrace() async throws {
        guard let python = try await OTLPReceiver.python() else { return }
        let receiver = try await OTLPReceiver.start(python: python)
        defer { receiver.stop() }
        let hooks = try await HookServer.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-tracing-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let hooksFile = directory.appendingPathComponent("hooks.json")
        try JSONSerialization.data(withJSONObject: [
            "hooks": [["url": "http://127.0.0.1:\(hooks.port)/hook", "points": ["signup", "login"], "timeout_ms": 10000]],
            "webhooks": [
                [
                    "url": "http://127.0.0.1:\(hooks.port)/events",
                    "secrets": ["whsec_" + Data(repeating: 0x41, count: 32).base64EncodedString()],
                ]
            ],
        ]).write(to: hooksFile)
        let port = try await HookServer.freePort()
        let base = "http://127.0.0.1:\(port)"
        let process = Process()
        process.executableURL = Subprocess.builtProduct("gatehouse")
        process.arguments = ["serve"]
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEHOUSE_") }.merging([
            "GATEHOUSE_DATABASE_URL": "sqlite://" + directory.appendingPathComponent("gatehouse.sqlite").path,
            "GATEHOUSE_SECRET_FILE": directory.appendingPathComponent("secret").path, "GATEHOUSE_PORT": "\(port)",
            "GATEHOUSE_PUBLIC_URL": base, "GATEHOUSE_HOOKS_FILE": hooksFile.path,
            "GATEHOUSE_OTLP_ENDPOINT": "http://127.0.0.1:\(receiver.port)", "OTEL_SERVICE_NAME": "gatehouse-tr1",
            "GATEHOUSE_LOG_FORMAT": "json", "GATEHOUSE_LOG_LEVEL": "debug", "GATEHOUSE_ARGON2_MEMORY": "1024",
            "GATEHOUSE_ARGON2_ITERATIONS": "1",
        ]) { $1 }
        let stdout = Pipe()
        let log = directory.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: log)
        try await Subprocess.launch(process)
        defer { if process.isRunning { process.terminate() } }
        // The first line on stdout names the default client it created (mail verification on).
        _ = await Subprocess.firstLine(stdout.fileHandleForReading)
        _ = try await eventually {
            let answer = try? await NoRedirectHTTP.send("GET", URL(string: base + "/health/ready")!)
            return answer?.status == 200 ? true : nil
        }
        // A client whose users sign in before verifying their address, made as an operator would.
        let clientID = "traced"
        let made = try await Subprocess.run(
            Subprocess.builtProduct("gatehouse"),
            [
                "clients", "create", "--name", "Traced", "--id", clientID, "--set", "email_verification=off", "--database-url",
                "sqlite://" + directory.appendingPathComponent("gatehouse.sqlite").path, "--secret-file",
                directory.appendingPathComponent("secret").path,
            ])
        #expect(made.status == 0, "\(made.output)")

        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736", callerSpan = "00f067aa0ba902b7"
        let signUp = try await NoRedirectHTTP.send(
            "POST", URL(string: base + "/v1/signup")!,
            body: try JSONSerialization.data(withJSONObject: [
                "client_id": clientID, "email": "traced@example.com", "password": "correct horse battery",
            ]),
            headers: ["Content-Type": "application/json", "traceparent": "00-\(traceID)-\(callerSpan)-01"])
        #expect(signUp.status == 201, "\(signUp.text)")

        // Exported twice a second: wait for the hook's span, the last to end before the request's.
        var spans: [[String: Any]] = []
        _ = try await eventually {
            spans = receiver.lines().filter { $0["traceId"] as? String == traceID }
            let done = spans.contains { ($0["kind"] as? Int) == 2 } && spans.contains { ($0["name"] as? String) == "hook signup" }
            return done ? true : nil
        }
        let refused = receiver.lines().compactMap { $0["refused"] as? String }
        #expect(refused.isEmpty, "the receiver refused: \(refused)")
        let server = try #require(spans.first { ($0["kind"] as? Int) == 2 }, "no server span in \(spans)")
        #expect(server["name"] as? String == "/v1/signup" && server["parentSpanId"] as? String == callerSpan)
        #expect(server["service"] as? String == "gatehouse-tr1")
        let serverSpan = try #require(server["spanId"] as? String)
        let hook = try #require(spans.first { $0["name"] as? String == "hook signup" }, "no hook span in \(spans.map { $0["name"] })")
        #expect(hook["kind"] as? Int == 3)
        let database = spans.filter { ($0["name"] as? String)?.hasPrefix("db.") == true }
        #expect(database.count >= 2, "\(spans.map { $0["name"] })")
        // Every span hangs from the request's (directly, or through the hook's).
        #expect(database.allSatisfy { $0["parentSpanId"] as? String == serverSpan })
        #expect(hook["parentSpanId"] as? String == serverSpan)

        let call = try #require(await hooks.received.first { $0.path == "/hook" && $0.json["type"] as? String == "signup" })
        #expect(call.headers["traceparent"] == "00-\(traceID)-\(hook["spanId"] as? String ?? "")-01", "\(call.headers)")

        // The webhook goes out later, from the outbox: its delivery is a trace of its own, and the
        // receiver gets that trace's traceparent.
        let delivery = try await eventually { await hooks.received.first { $0.path == "/events" } }
        let paths = await hooks.received.map(\.path)
        let outbox = try? await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            [directory.appendingPathComponent("gatehouse.sqlite").path, "select kind, channel, status, attempts, last_error from outbox"])
        let webhookParent = try #require(
            delivery?.headers["traceparent"],
            "no traceparent on the webhook call: \(paths), \(outbox?.output ?? ""), \(delivery?.headers ?? [:]); \((try? String(contentsOf: log, encoding: .utf8))?.suffix(1500) ?? "")"
        )
        let parts = webhookParent.split(separator: "-").map(String.init)
        let webhookSpan = try await eventually { receiver.lines().first { $0["name"] as? String == "webhook user.created" } }
        #expect(parts.count == 4 && webhookSpan?["traceId"] as? String == parts[1] && webhookSpan?["spanId"] as? String == parts[2])

        let lines = (try String(contentsOf: log, encoding: .utf8)).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        let request = lines.first { $0["msg"] == "request" && $0["path"] == "/v1/signup" }
        #expect(request?["trace_id"] == traceID && request?["span_id"] == serverSpan, "\(lines.suffix(5))")
        #expect(!lines.isEmpty && lines.allSatisfy { $0["ts"] != nil && $0["level"] != nil }, "every line is a JSON object")

        // A sign-in without a caller's trace starts one: its server span is a root, the login hook's
        // span hangs from it, and the hook receives that span's traceparent.
        let login = try await NoRedirectHTTP.send(
            "POST", URL(string: base + "/v1/login")!,
            body: try JSONSerialization.data(withJSONObject: [
                "client_id": clientID, "email": "traced@example.com", "password": "correct horse battery",
            ]),
            headers: ["Content-Type": "application/json"])
        #expect(login.status == 200, "\(login.text)")
        let loginCall = try #require(await hooks.received.first { $0.path == "/hook" && $0.json["type"] as? String == "login" })
        let loginParent = (loginCall.headers["traceparent"] ?? "").split(separator: "-").map(String.init)
        var loginSpans: [[String: Any]] = []
        if loginParent.count == 4 {
            _ = try await eventually {
                loginSpans = receiver.lines().filter { $0["traceId"] as? String == loginParent[1] }
                return loginSpans.contains { ($0["kind"] as? Int) == 2 } ? true : nil
            }
        }
        let loginServer = try #require(loginSpans.first { ($0["kind"] as? Int) == 2 }, "no server span for the login: \(loginSpans)")
        let loginHook = loginSpans.first { $0["name"] as? String == "hook login" }
        #expect(loginServer["name"] as? String == "/v1/login" && loginServer["parentSpanId"] == nil)
        #expect(loginParent.count == 4 && loginHook?["spanId"] as? String == loginParent[2])
        #expect(loginHook?["parentSpanId"] as? String == loginServer["spanId"] as? String)

        process.terminate()
        await hooks.stop()
    }
}
