import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// The assurance gate over HTTP, for the sign-in methods that need a provider, a device key or a
/// browser: with the test factor required, each answers `mfa_required` (or waits on the hosted factor
/// page) and starts nothing; completing the factor starts exactly one session.
@Suite("The assurance gate over HTTP")
struct AssuranceGateHTTPTests {
    enum Method: String, CaseIterable, CustomTestStringConvertible {
        case socialIDToken, socialAccessToken, socialWebCallback, deviceAuthenticator, hostedPassword, hostedProvider
        var testDescription: String { rawValue }
    }

    static let app = "gatehouse-app"

    @Test(
        "GATE-2: a required second factor gates provider, device and hosted sign-ins; completing it starts exactly one session",
        arguments: Method.allCases)
    func gate(_ method: Method) async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let idp = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: idp.jwks) }
        let local: [String: Any] = [
            "id": "local", "type": "oidc", "issuer": idp.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks", "client_ids": [Self.app],
        ]
        let policy = RequireTestFactor(clients: [])
        let server = try await SocialFixtures.server(fake, extra: [local], assurance: policy, factors: [TestSecondFactor()])
        _ = try await server.createClient(
            id: "spa", redirectURIs: [Hosted.spa], settings: ["email_verification=off", "social_providers=github"])
        let services = server.services
        try await server.withRouter { client in
            // A device key registered before the requirement was turned on.
            var device = TestDevice()
            var deviceUser: SignedIn?
            if method == .deviceAuthenticator {
                let user = try await signUp(client, email: "dev@example.com")
                #expect(try await client.register(&device, bearer: user.accessToken).status == .created)
                deviceUser = user
            }
            if method == .hostedPassword { _ = try await signUp(client, email: "page@example.com") }
            for id in ["social", "spa", TestServer.openClient] { policy.require(for: id) }

            let flowID: UUID
            let email: String
            switch method {
            case .socialIDToken:
                email = "ida@example.com"
                let nonce = "n-" + UUID().uuidString
                let token = try idp.token(
                    idp.claims(subject: "s-1", audience: Self.app, nonce: nonce, email: email, now: server.clock.now()))
                flowID = try Self.refused(
                    try await client.json(.post, "/v1/social/local/token", ["client_id": "social", "id_token": token, "nonce": nonce]))
            case .socialAccessToken:
                email = "octo@example.com"
                let token = try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")
                flowID = try Self.refused(
                    try await client.json(.post, "/v1/social/github/token", ["client_id": "social", "access_token": token]))
            case .socialWebCallback:
                email = "octo@example.com"
                let landed = try await WebWalk(client: client, fake: fake).signIn("github", user: "octo", pkce: WebWalk.pkce())
                let query = WebWalk.query(landed)
                #expect(query["error"] == "mfa_required" && query["code"] == nil, "\(landed)")
                flowID = try #require(query["flow_id"].flatMap(UUID.init(uuidString:)))
            case .deviceAuthenticator:
                email = "dev@example.com"
                flowID = try Self.refused(try await client.answer(device))
            case .hostedPassword, .hostedProvider:
                email = method == .hostedPassword ? "page@example.com" : "octo@example.com"
                try await Self.hosted(method, client: client, fake: fake, email: email, services: services)
                return
            }
            let user = try #require(try await server.persistence.read { try await $0.users.find(email: email) })
            let live = { @Sendable in
                try await server.persistence.read { try await $0.sessions.listLive(userID: user.id, now: server.clock.now()) }.count
            }
            let before = try await live()
            #expect(before == (deviceUser == nil ? 0 : 1), "no session started before the factor")

            let factors = SecondFactorFlow(services: services)
            await #expect(throws: GatehouseError.self) {
                try await factors.complete(flowID: flowID, factor: "test", response: "wrong", meta: RequestMeta())
            }
            #expect(try await live() == before)
            let completed = try await factors.complete(
                flowID: flowID, factor: "test", response: TestSecondFactor.answer, meta: RequestMeta())
            switch completed.signedIn.started {
            case .app(let started):
                #expect(started.session.amr.contains("mfa") && started.session.amr.contains("test"))
                #expect(try await live() == before + 1)
            case .code(let code):
                // The web callback's code: the app exchanges it for the session.
                #expect(method == .socialWebCallback)
                #expect(try await live() == before)
                #expect(!code.isEmpty)
            case .browser:
                Issue.record("\(method) started a browser session")
            }
            await #expect(throws: GatehouseError.self) {
                try await factors.complete(flowID: flowID, factor: "test", response: TestSecondFactor.answer, meta: RequestMeta())
            }
        }
        await jwks.stop()
    }

    /// A 403 `mfa_required` with the waiting flow's id and factors, and no tokens.
    static func refused(_ response: TestResponse) throws -> UUID {
        #expect(response.status == .forbidden && response.string("code") == "mfa_required", "\(response.text)")
        #expect(response.object["access_token"] == nil && response.object["refresh_token"] == nil)
        #expect(response.object["factors"] as? [String] == ["test"])
        return try #require(response.string("flow_id").flatMap(UUID.init(uuidString:)), "\(response.text)")
    }

    /// The hosted page: the sign-in waits on the factor page (no browser session, no code), a wrong
    /// answer is shown there, the right one signs the browser in and answers the client with a code
    /// whose tokens carry `mfa`.
    static func hosted(
        _ method: Method, client: some TestClientProtocol, fake: ProviderAPIsServer, email: String, services: CoreServices
    ) async throws {
        let jar = HostedJar(client)
        let pkce = pkcePair()
        let request = Hosted.request(challenge: pkce.challenge)
        let waiting: TestResponse
        if method == .hostedPassword {
            waiting = try await Hosted.signIn(jar, request, email: email, password: "correct horse battery")
        } else {
            let page = try await jar.open(request)
            let button = try #require(HostedJar.attribute(page.text, after: "id=\"social-github\" href=\""), "\(page.text)")
            let toProvider = try await jar.send(.get, button)
            let started = WebWalk.Started(
                providerURL: try #require(toProvider.headers[.location].flatMap(URL.init(string:))), cookie: nil, status: toProvider.status,
                text: "")
            let back = try await WebWalk(client: client, fake: fake).approve(started, user: "octo")
            waiting = try await jar.open(back.path + (back.query.map { "?" + $0 } ?? ""))
        }
        #expect(waiting.status == .ok && waiting.text.contains("id=\"factor\""), "\(waiting.status) \(waiting.text)")
        #expect(jar.cookies["gh_session"] == nil, "a browser session before the factor")
        let action = try #require(HostedJar.action(waiting, form: "factor"))
        let wrong = try await jar.submit(action, [("factor", "test"), ("code", "wrong")], csrf: HostedJar.csrf(waiting))
        #expect(
            wrong.status == .unauthorized && wrong.text.contains("id=\"error\"") && wrong.text.contains("id=\"factor\""), "\(wrong.text)")
        #expect(jar.cookies["gh_session"] == nil)
        let landed = try await jar.submit(action, [("factor", "test"), ("code", TestSecondFactor.answer)], csrf: HostedJar.csrf(wrong))
        #expect(
            landed.status == .seeOther && landed.headers[.location]?.hasPrefix(Hosted.spa + "?") == true, "\(landed.status) \(landed.text)")
        #expect(jar.cookies["gh_session"] != nil)
        let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(landed)["code"]), verifier: pkce.verifier)
        #expect(tokens.status == .ok, "\(tokens.text)")
        let amr = try decodeClaims(try #require(tokens.string("id_token")))["amr"] as? [String] ?? []
        #expect(amr.contains("mfa") && amr.contains("test"), "\(amr)")
        // The browser's session carries the factor: the next authorization needs nothing more.
        let again = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
        #expect(HostedJar.query(again)["code"] != nil, "\(again.headers)")
    }
}
