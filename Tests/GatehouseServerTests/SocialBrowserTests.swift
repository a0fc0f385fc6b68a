import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Testing

@Suite("Social sign-in in a real browser")
struct SocialBrowserTests {
    static let script = Browser.script.deletingLastPathComponent().appendingPathComponent("social_flow.py")

    @Test(
        "SO-8: headless Chromium walks the web sign-in end to end: Gatehouse's start page, a real OpenID provider's login form (oidc-provider-mock) and a GitHub-like consent page, the callback, the app's redirect with a code and its state; the app's exchange gives is_new true then false; Cancel comes back as access_denied; screenshots of the provider pages and the app",
        .enabled("needs chromium, chromedriver, selenium and oidc-provider-mock") {
            let browser = try await Browser.available()
            let provider = try await MockOIDCProvider.available()
            return browser && provider
        })
    func browserWebFlow() async throws {
        let mock = try await MockOIDCProvider.start()
        defer { mock.stop() }
        try await mock.putUser("browser-alice", ["email": "alice@browser.example", "email_verified": true, "given_name": "Alice"])
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let appPort = try await HookServer.freePort()
        let appRedirect = "http://127.0.0.1:\(appPort)/app/callback"
        let providers =
            SocialFixtures.providers(fake) + [
                ["id": "mock", "type": "oidc", "issuer": mock.issuer, "client_ids": ["gatehouse-web"], "client_secret": "mock-secret"]
            ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": providers]).write(to: file)
        let live = try await LiveServer.start { $0.socialFile = file.path }
        let server = live.server
        let base = live.base
        try await server.createClient(
            id: "web", redirectURIs: [appRedirect], settings: ["email_verification=off", "social_providers=mock,github"])
        let screenshots = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_SCREENSHOTS"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-social-\(UUID().uuidString)").path)

        /// One browser run: the start URL with a fresh PKCE pair; answers the app's query and the verifier.
        func walk(_ provider: String, page: String, user: String, state: String, deny: Bool = false) async throws -> ([String: Any], String)
        {
            let pkce = WebWalk.pkce()
            var start = URLComponents(string: base + "/v1/social/\(provider)/start")!
            start.queryItems = [
                URLQueryItem(name: "client_id", value: "web"), URLQueryItem(name: "redirect_to", value: appRedirect),
                URLQueryItem(name: "code_challenge", value: pkce.challenge), URLQueryItem(name: "code_challenge_method", value: "S256"),
                URLQueryItem(name: "state", value: state),
            ]
            let shots = screenshots.appendingPathComponent("\(provider)-\(state)")
            try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
            let result = try await Subprocess.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["python3", Self.script.path, start.url!.absoluteString, page, user, String(appPort), shots.path] + (deny ? ["--deny"] : [])
            )
            #expect(result.status == 0, "\(result.output)")
            let last = result.output.split(separator: "\n").last.map(String.init) ?? ""
            let query = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
            for name in ["provider.png", "app.png"] {
                let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
                #expect(size > 2000, "\(name) was not taken")
            }
            return (query, pkce.verifier)
        }
        func exchange(_ code: String, _ verifier: String) async throws -> [String: Any] {
            let answer = try await NoRedirectHTTP.form(
                URL(string: base + "/oauth/token")!,
                [
                    ("grant_type", "authorization_code"), ("code", code), ("client_id", "web"), ("redirect_uri", appRedirect),
                    ("code_verifier", verifier),
                ])
            #expect(answer.status == 200, "\(answer.text)")
            return (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]) ?? [:]
        }

        var subjects: [String] = []
        for (provider, page, user) in [("mock", "oidc-mock", "browser-alice"), ("github", "fake", "octo")] {
            for round in 0..<2 {
                let state = "s\(round)-\(provider)"
                let (query, verifier) = try await walk(provider, page: page, user: user, state: state)
                #expect(query["state"] as? String == state, "\(query)")
                let code = try #require(query["code"] as? String, "\(provider): \(query)")
                let tokens = try await exchange(code, verifier)
                #expect(tokens["is_new"] as? Bool == (round == 0), "\(provider) round \(round): \(tokens)")
                let claims = try decodeClaims(try #require(tokens["access_token"] as? String))
                #expect(claims["amr"] as? [String] == ["fed"])
                subjects.append(claims["sub"] as? String ?? "")
            }
        }
        #expect(subjects[0] == subjects[1] && subjects[2] == subjects[3] && subjects[0] != subjects[2], "\(subjects)")
        let (denied, _) = try await walk("github", page: "fake", user: "octo", state: "s-deny", deny: true)
        #expect(denied["error"] as? String == "access_denied" && denied["state"] as? String == "s-deny", "\(denied)")

        await live.stop()
    }
}
