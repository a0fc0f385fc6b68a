import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Testing

/// Passkeys on the hosted pages in headless Chromium, with WebDriver's virtual authenticator as the
/// device's authenticator (`scripts/browser/passkey_flow.py`).
@Suite("Passkeys in a real browser")
struct PasskeyBrowserTests {
    static let script = Browser.script.deletingLastPathComponent().appendingPathComponent("passkey_flow.py")

    @Test(
        "PK-8: headless Chromium with a virtual authenticator (CTAP2, resident keys, user verification) signs in with the password on the hosted page and creates a passkey on the hosted enrolment page (/passkeys/new), which leads back to the client; in a browser without passkey autofill the hosted sign-in page's passkey button signs in with no email typed (the ID token says hwk, user, mfa); with autofill the page's background request (conditional mediation) signs in without a click; on an mfa=required client the factor page offers the passkey after the password and it completes the sign-in (pwd, hwk, mfa); screenshots of the pages",
        .enabled("needs chromium, chromedriver, selenium and requests") {
            let browser = try await Browser.available()
            let requests = try await TestTools.pythonHas("requests")
            return browser && requests
        })
    func passkeysInChromium() async throws {
        // An RP ID is a domain name: the browser goes to localhost, which the server names as its public URL.
        let live = try await LiveServer.start { $0.publicURL = "http://localhost:\($0.port)" }
        let base = live.base.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let server = live.server
        // The client's redirect is a page of the server's own, so the screenshots after a sign-in show a page.
        let redirect = base + "/health/live"
        try await server.createClient(
            id: "passkey-web", redirectURIs: [redirect], settings: ["email_verification=off", "methods=password,passkey"])
        try await server.createClient(
            id: "passkey-web-mfa", redirectURIs: [redirect],
            settings: ["email_verification=off", "methods=password,passkey", "mfa=required"])
        let email = "passkey-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "a passkey passphrase"
        let signup = try await NoRedirectHTTP.send(
            "POST", URL(string: base + "/v1/signup")!,
            body: try JSONSerialization.data(withJSONObject: ["client_id": "passkey-web", "email": email, "password": password]),
            headers: ["Content-Type": "application/json"])
        #expect(signup.status == 201, "\(signup.text)")
        let shots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-passkey-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let result = try await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", Self.script.path, "--base", base, "--client", "passkey-web", "--mfa-client", "passkey-web-mfa",
                "--redirect", redirect, "--email", email, "--password", password, "--shots", shots.path,
            ])
        #expect(result.status == 0, "\(result.output)")
        let last = result.output.split(separator: "\n").last.map(String.init) ?? ""
        let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        let phases = summary["phases"] as? [String] ?? []
        #expect(phases == ["register", "usernameless", "autofill", "second-factor"], "\(result.output)")
        for name in [
            "30-passkey-new.png", "30-passkey-added.png", "31-signin-passkey.png", "32-after-passkey.png", "33-autofill.png",
            "34-factor-passkey.png", "35-after-factor.png",
        ] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 500, "\(name) was not taken")
        }
        let userID = try #require(try await server.persistence.read { try await $0.users.find(email: email) }?.id)
        let passkeys = try await server.persistence.read { try await $0.credentials.list(userID: userID, type: .passkey) }
        #expect(passkeys.count == 1)
        #expect(!result.output.contains(password))
        let audited = try await server.persistence.read {
            try await $0.audit.list(AuditQuery(userID: userID, type: AuditEvent.factorEnrolled))
        }
        #expect(audited.map(\.method) == ["passkey"])
        await live.stop()
    }
}
