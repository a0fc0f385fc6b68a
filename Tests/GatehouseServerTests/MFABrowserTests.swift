import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// The second factor walked in a real browser by a standard OpenID Connect client library, with the QR
/// code read by a real decoder and the codes made by an independent TOTP implementation.
@Suite("Second factors in a real browser")
struct MFABrowserTests {
    static let script = Browser.script.deletingLastPathComponent().appendingPathComponent("mfa_flow.py")

    static func toolsAvailable() async throws -> Bool {
        let python = try TestTools.require(
            try await TestTools.pythonHas("authlib", "pyotp"), what: "Authlib and pyotp", install: "pip install authlib requests pyotp")
        let zbar = try TestTools.require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), what: "zbarimg (a QR code decoder)",
            install: "apt-get install zbar-tools")
        return python && zbar
    }

    @Test(
        "MFA-5: Authlib asks for acr 2 after a resource server's RFC 9470 challenge; headless Chromium walks the enrolment page (its QR code decoded by zbarimg into the otpauth URI pyotp codes from), the recovery codes shown once, then sign-ins with a code and with a recovery code; ID tokens say acr 2 and amr otp+mfa; prompt=none with acr_values=2 answers at once; screenshots of every page",
        .enabled("needs chromium, chromedriver, selenium, authlib, pyotp and zbarimg") {
            let browser = try await Browser.available()
            let tools = try await Self.toolsAvailable()
            return browser && tools
        })
    func stepUpInChromium() async throws {
        let appPort = try await HookServer.freePort()
        let app = "http://127.0.0.1:\(appPort)"
        let live = try await LiveServer.start()
        let server = live.server
        _ = try await server.createClient(id: "mfa-web", redirectURIs: [app + "/cb"], settings: ["email_verification=off"])
        let email = "mfa-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "a second factor passphrase"
        let signup = try await NoRedirectHTTP.send(
            "POST", URL(string: live.base + "/v1/signup")!,
            body: try JSONSerialization.data(withJSONObject: ["client_id": "mfa-web", "email": email, "password": password]),
            headers: ["Content-Type": "application/json"])
        #expect(signup.status == 201, "\(signup.text)")
        // The server's clock follows the real one here: pyotp's codes are made at real time.
        server.clock.followRealTime()
        let shots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-mfa-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let result = try await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", Self.script.path, "--issuer", live.base, "--app-port", String(appPort), "--shots", shots.path, "--email", email,
                "--password", password, "--client", "mfa-web",
            ])
        #expect(result.status == 0, "\(result.output)")
        let last = result.output.split(separator: "\n").last.map(String.init) ?? ""
        let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        #expect(
            summary["phases"] as? [String] == [
                "discovery", "one-factor", "resource-challenge", "step-up-enrol", "prompt-none-level-2", "totp-signin", "recovery-code",
            ], "\(result.output)")
        for name in ["11-enrol.png", "11-qr.png", "12-recovery-codes.png", "13-factor.png", "14-recovery-code.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 500, "\(name) was not taken")
        }
        // What the browser did is on the server: one confirmed app, nine recovery codes left, one used.
        let userID = try #require(try await server.persistence.read { try await $0.users.find(email: email) }?.id)
        let (apps, left, used) = try await server.persistence.read { stores in
            (
                try await stores.credentials.list(userID: userID, type: .totp).count,
                try await stores.credentials.count(userID: userID, type: .recoveryCode),
                try await stores.audit.list(AuditQuery(type: AuditEvent.recoveryCodeUsed)).count
            )
        }
        #expect(apps == 1 && left == 9 && used == 1, "apps \(apps), codes left \(left), used \(used)")
        #expect(!result.output.contains(password))
        await live.stop()
    }
}
