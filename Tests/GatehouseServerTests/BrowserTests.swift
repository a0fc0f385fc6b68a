import Foundation
import GatehouseTesting
import HummingbirdTesting
import Testing

/// Where the browser test's tools are; under CI they must be there.
enum Browser {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/browser/reset_flow.py")

    static func available() async throws -> Bool {
        let binaries = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        let selenium = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import selenium"]).status == 0
        let ok = binaries && selenium
        if !ok {
            if ProcessInfo.processInfo.environment["CI"].map({ !$0.isEmpty && $0 != "0" && $0 != "false" }) ?? false {
                throw BrowserUnavailable()
            }
            print("note: chromium/chromedriver/selenium missing; the browser test is skipped (apt-get install chromium chromium-driver; pip install selenium)")
        }
        return ok
    }
}

struct BrowserUnavailable: Error, CustomStringConvertible {
    var description: String { "chromium, chromedriver and selenium are required under CI" }
}

@Suite("Hosted pages in a real browser")
struct BrowserTests {
    @Test("Headless Chromium: open the reset link, see the page, set a new password, sign in with it",
          .enabled("needs chromium, chromedriver and selenium") { try await Browser.available() })
    func resetInChromium() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let app = server.server.makeApplication()
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let user = try await signUp(client)
                _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
                try await server.deliverMail()
                let path = try #require(server.lastMail(to: user.email.lowercased(), kind: "recovery")?.linkPath("/reset?token="))
                let screenshot = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-reset-\(UUID().uuidString).png")
                defer { try? FileManager.default.removeItem(at: screenshot) }
                let result = try await Subprocess.run(
                    URL(fileURLWithPath: "/usr/bin/env"), ["python3", Browser.script.path, "http://127.0.0.1:\(port)\(path)", "browser chosen pass", screenshot.path])
                #expect(result.status == 0, "\(result.output)")
                // For a person to look at: GATEHOUSE_KEEP_SCREENSHOT=/path/file.png keeps it.
                if let keep = ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOT"] {
                    try? FileManager.default.removeItem(atPath: keep)
                    try FileManager.default.copyItem(at: screenshot, to: URL(fileURLWithPath: keep))
                }
                _ = try await logIn(client, email: user.email, password: "browser chosen pass")
                let old = try await client.json(.post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
                #expect(old.status == .unauthorized)
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
