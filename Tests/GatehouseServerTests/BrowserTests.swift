import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Where the browser test's tools are; under CI they must be there.
enum Browser {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/browser/reset_flow.py")

    /// The live test client keeps one connection across a Chromium run, and does not reconnect when
    /// the server closes it. With several browser tests at once a run can outlast the server's 60 s
    /// idle timeout (CI saw 122 s and 153 s, then "I/O on closed channel"), so these servers wait longer.
    static let liveIdleTimeout: TimeInterval = 600

    static func available() async throws -> Bool {
        let binaries =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        let selenium = try await TestTools.pythonHas("selenium")
        return try TestTools.require(
            binaries && selenium, what: "chromium, chromedriver and selenium",
            install: "apt-get install chromium chromium-driver; pip install selenium")
    }
}

@Suite("Hosted pages in a real browser")
struct BrowserTests {
    @Test(
        "Headless Chromium: open the reset link, see the page, set a new password, sign in with it",
        .enabled("needs chromium, chromedriver and selenium") { try await Browser.available() })
    func resetInChromium() async throws {
        let server = try await TestServer.startOpen(.sqlite) { $0.idleTimeout = Browser.liveIdleTimeout }
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
                    URL(fileURLWithPath: "/usr/bin/env"),
                    ["python3", Browser.script.path, "http://127.0.0.1:\(port)\(path)", "browser chosen pass", screenshot.path])
                #expect(result.status == 0, "\(result.output)")
                // For a person to look at: GATEHOUSE_KEEP_SCREENSHOT=/path/file.png keeps it.
                if let keep = ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOT"] {
                    try? FileManager.default.removeItem(atPath: keep)
                    try FileManager.default.copyItem(at: screenshot, to: URL(fileURLWithPath: keep))
                }
                _ = try await logIn(client, email: user.email, password: "browser chosen pass")
                let old = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
                #expect(old.status == .unauthorized)
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test(
        "Headless Chromium in the admin console: sign in by a CLI link, see the charts, search a user, revoke a session, find it in the audit view",
        .enabled("needs chromium, chromedriver and selenium") { try await Browser.available() })
    func consoleInChromium() async throws {
        let server = try await TestServer.startOpen(.sqlite) { $0.idleTimeout = Browser.liveIdleTimeout }
        let app = server.server.makeApplication()
        let screenshots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-console-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let user = try await signUp(client, email: "console-victim@example.com")
                let second = try await logIn(client, email: user.email, password: user.password)
                _ = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": "a wrong guess"])
                _ = try await refresh(client, second.refreshToken)
                // The link as `gatehouse console link` makes it.
                let binary = Subprocess.builtProduct("gatehouse")
                let made = try await Subprocess.run(
                    binary,
                    [
                        "console", "link", "--operator", "ada", "--database-url", server.server.configuration.databaseURL,
                        "--public-url", "http://127.0.0.1:\(port)",
                    ])
                #expect(made.status == 0, "\(made.output)")
                let link = try #require(made.output.split(separator: "\n").last.map(String.init))
                let script = Browser.script.deletingLastPathComponent().appendingPathComponent("console_flow.py")
                let result = try await Subprocess.run(
                    URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, link, user.email, "ada", screenshots.path])
                #expect(result.status == 0, "\(result.output)")
                let revoked = try #require(result.output.split(separator: "\n").last.map(String.init))
                let revokedID = try #require(UUID(uuidString: revoked), "the script's last line names the revoked session")
                // The browser's click really ended that session, and only it.
                let sessions = try await server.persistence.read { try await $0.sessions.find(id: revokedID) }
                #expect(sessions?.revokeReason == "admin_revoked")
                let revokedToken = revoked == user.sessionID ? user.refreshToken : second.refreshToken
                #expect(try await refresh(client, revokedToken).status == .badRequest)
                // The link is spent: a second visit cannot sign in.
                let again = try await client.json(.post, "/admin/console/enter", nil)
                #expect(again.status == .unsupportedMediaType || again.status == .forbidden)
                let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(type: "admin.session.revoked"))
                #expect(events.count == 1 && events.first?.actor == "console:ada" && events.first?.requestID?.isEmpty == false)
                for name in ["overview.png", "users.png", "user.png", "audit.png"] {
                    #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path), "\(name)")
                }
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        if ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"] == nil { try? FileManager.default.removeItem(at: screenshots) }
    }
}
