import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Testing

/// The device grant with real parts: a script plays the TV (asks for codes, polls as RFC 8628 says),
/// headless Chromium plays the phone on the hosted pages.
@Suite("Device grant in a real browser")
struct DeviceBrowserTests {
    static let script = Browser.script.deletingLastPathComponent().appendingPathComponent("device_flow.py")

    @Test(
        "DG-2: a script polls as the TV (slow_down honoured) while headless Chromium opens verification_uri_complete, signs in, sees the consent page name the client and approves; the TV gets tokens once; a second code typed by hand is declined and that TV hears access_denied; screenshots of every page",
        .enabled("needs chromium, chromedriver, selenium and requests") {
            let browser = try await Browser.available()
            let requests = try await TestTools.pythonHas("requests")
            return browser && requests
        })
    func deviceInChromium() async throws {
        let live = try await LiveServer.start()
        let server = live.server
        try await server.createClient(id: "living-room-tv", settings: ["email_verification=off"])
        // The TV polls by the real clock: the server's must follow it for the interval to pass.
        server.clock.followRealTime()
        let email = "tv-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "a device grant passphrase"
        let signup = try await NoRedirectHTTP.send(
            "POST", URL(string: live.base + "/v1/signup")!,
            body: try JSONSerialization.data(withJSONObject: ["client_id": "living-room-tv", "email": email, "password": password]),
            headers: ["Content-Type": "application/json"])
        #expect(signup.status == 201, "\(signup.text)")
        let shots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-device-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let result = try await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", Self.script.path, "--issuer", live.base, "--client", "living-room-tv", "--client-name", "living-room-tv",
                "--email", email, "--password", password, "--shots", shots.path,
            ])
        #expect(result.status == 0, "\(result.output)")
        let last = result.output.split(separator: "\n").last.map(String.init) ?? ""
        let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        #expect(summary["phases"] as? [String] == ["device-code", "approve", "decline"], "\(result.output)")
        for name in ["21-device-code.png", "22-signin.png", "23-consent.png", "24-connected.png", "25-declined.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 500, "\(name) was not taken")
        }
        // The approval is a session of the TV's client for the person.
        let userID = try #require(try await server.persistence.read { try await $0.users.find(email: email) }?.id)
        let sessions = try await server.persistence.read { try await $0.sessions.listLive(userID: userID, now: Date()) }
        #expect(sessions.contains { $0.clientID == "living-room-tv" && $0.scopes.contains("openid") }, "\(sessions)")
        #expect(!result.output.contains(password))
        await live.stop()
    }
}
