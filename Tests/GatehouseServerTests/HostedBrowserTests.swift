import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Testing

@Suite("Hosted sign-in in a real browser")
struct HostedBrowserTests {
    static let script = Browser.script.deletingLastPathComponent().appendingPathComponent("hosted_flow.py")

    static func authlibAvailable() async throws -> Bool {
        try TestTools.require(
            try await TestTools.pythonHas("authlib"), what: "Authlib (a standard OpenID Connect client library)",
            install: "pip install authlib requests")
    }

    @Test(
        "OIDC-1: an unmodified OpenID Connect client library (Authlib) drives the code flow with PKCE while headless Chromium fills in the hosted pages: sign-in, SSO into a third-party client without a password through its required-fields and consent pages, prompt=none with a session, the terms page after a terms bump, max_age=0 forcing a new sign-in, RP-initiated logout ending SSO and the sessions it signed in after Chromium loaded the front-channel logout frames (iss and the client's sid), prompt=none without a session answering login_required; ID tokens, at_hash, auth_time and userinfo checked by the library; screenshots of every page",
        .enabled("needs chromium, chromedriver, selenium and authlib") {
            let browser = try await Browser.available()
            let authlib = try await Self.authlibAvailable()
            return browser && authlib
        })
    func standardClientInChromium() async throws {
        let appPort = try await HookServer.freePort()
        let app = "http://127.0.0.1:\(appPort)"
        let live = try await LiveServer.start()
        let server = live.server
        let terms = ["terms_client_version=1", "terms_client_url=https://example.com/terms/1"]
        _ = try await server.createClient(
            id: "web-public", redirectURIs: [app + "/cb"],
            settings: [
                "email_verification=off", "post_logout_redirect_uris=\(app)/logged-out", "brand_color=#1b5e20",
                "frontchannel_logout_uri=\(app)/fc?client=web-public",
            ] + terms)
        let partner = try await server.createClient(
            id: "partner", kind: .confidential, redirectURIs: [app + "/cb2"],
            settings: [
                "email_verification=off", "third_party=on", "required_fields=name", "post_logout_redirect_uris=\(app)/logged-out",
                "frontchannel_logout_uri=\(app)/fc?client=partner",
            ])
        let admin = try await server.createClient(id: "ops", kind: .confidential)
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
            id: "ops", settings: [], scopes: ["admin:clients"])
        let email = "hosted-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "a hosted sign-in passphrase"
        let signup = try await NoRedirectHTTP.send(
            "POST", URL(string: live.base + "/v1/signup")!,
            body: try JSONSerialization.data(withJSONObject: [
                "client_id": "web-public", "email": email, "password": password, "accept_terms": true,
            ]),
            headers: ["Content-Type": "application/json"])
        #expect(signup.status == 201, "\(signup.text)")

        // The script waits real seconds between sign-ins and expects auth_time to move with them, and
        // its OpenID library checks the tokens' times against its own clock: the server's follows real
        // time (a ticker advancing it fell behind when a loaded run starved it).
        server.clock.followRealTime()
        let shots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-hosted-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let result = try await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", Self.script.path, "--issuer", live.base, "--app-port", String(appPort), "--shots", shots.path,
                "--email", email, "--password", password, "--public-client", "web-public", "--confidential-client", "partner",
                "--confidential-secret", try #require(partner.secret), "--admin-client", "ops", "--admin-secret",
                try #require(admin.secret),
                "--terms-version", "2", "--frontchannel",
            ])
        #expect(result.status == 0, "\(result.output)")
        let last = result.output.split(separator: "\n").last.map(String.init) ?? ""
        let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        #expect(summary["ok"] as? Bool == true, "\(result.output)")
        #expect(summary["frontchannel_frames"] as? [String] == ["partner", "web-public"], "\(summary)")
        #expect(
            summary["phases"] as? [String] == [
                "discovery", "public-signin", "sso-confidential", "prompt-none", "terms-bump", "max-age-reauth", "rp-logout",
                "prompt-none-no-session", "signin-after-logout",
            ], "\(summary)")
        for name in [
            "01-signin.png", "02-fields.png", "03-consent.png", "04-terms.png", "05-signin-max-age.png", "08-signin-after-logout.png",
        ] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 2000, "\(name) was not taken")
        }
        // What the library did is on the server too: the consent is remembered, the profile filled in,
        // the new terms accepted, and logout ended every session the browser signed in.
        let state = try await server.persistence.read { stores -> (ConsentRecord?, UserRecord?, AgreementRecord?, [SessionRecord]) in
            let user = try await stores.users.find(email: email.lowercased())
            let id = try #require(user?.id)
            return (
                try await stores.consents.find(userID: id, clientID: "partner"), user,
                try await stores.agreements.find(userID: id, clientID: "web-public"),
                try await stores.sessions.listLive(userID: id, now: Date())
            )
        }
        #expect(state.0?.scopes.contains("openid") == true)
        #expect(state.1?.profile.name == "Ada Lovelace")
        #expect(state.2?.clientVersion == "2")
        #expect(state.3.allSatisfy { $0.browserSessionID == nil }, "\(state.3.map(\.clientID))")
        await live.stop()
    }
}
