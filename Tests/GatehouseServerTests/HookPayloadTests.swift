import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

/// What hooks and webhooks see of each way of signing in: the user's id whenever the sign-in knows
/// the user, and nothing derived from a device key, a secret or a token.
@Suite("Hook payloads per sign-in method")
struct HookPayloadTests {
    enum Method: String, CaseIterable, CustomTestStringConvertible {
        case password, mailCode, textCode, verificationCode, recovery, deviceAuthenticator, socialIDToken, socialAccessToken
        case hostedPassword, hostedCode
        var testDescription: String { rawValue }
    }

    static let app = "gatehouse-app"
    static let password = "correct horse battery"

    @Test("H-11: every hook payload of a sign-in carries the known user's id and no key, secret, code or token", arguments: Method.allCases)
    func payloads(_ method: Method) async throws {
        let receiver = try await HookServer.start()
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let idp = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: idp.jwks) }
        let providers =
            SocialFixtures.providers(fake) + [
                [
                    "id": "local", "type": "oidc", "issuer": idp.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
                    "client_ids": [Self.app],
                ]
            ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": providers]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try await HooksTests.start(
            .sqlite, hook: ["url": "http://127.0.0.1:\(receiver.port)/hook"], webhookURL: "http://127.0.0.1:\(receiver.port)/events"
        ) { $0.socialFile = file.path }
        try await server.createClient(id: "otp-app", settings: ["methods=password,email_otp,sms_otp", "email_verification=off"])
        try await server.createClient(id: "verified")
        try await server.createClient(id: "social", settings: ["email_verification=off", "social_providers=github,local"])
        _ = try await server.createClient(
            id: "spa", redirectURIs: [Hosted.spa], settings: ["email_verification=off", "methods=password,email_otp"])
        let secrets = Mutex<[String]>([Self.password])
        @Sendable func keep(_ values: String?...) { secrets.withLock { $0 += values.compactMap { $0 } } }
        let userID = Mutex<String?>(nil)
        let mark = Mutex(0)

        try await server.withRouter { client in
            func owner(_ response: TestResponse) throws -> String {
                try #require((response.object["user"] as? [String: Any])?["id"] as? String, "\(response.text)")
            }
            func tokens(_ response: TestResponse) {
                keep(response.string("access_token"), response.string("refresh_token"), response.string("id_token"))
            }
            func start() async { mark.withLock { $0 = 0 }; let count = await receiver.received.count; mark.withLock { $0 = count } }
            func code(_ to: String, _ kind: String) async throws -> String {
                try await drain(server)
                let code = try #require(server.lastMail(to: to, kind: kind)?.code)
                keep(code)
                return code
            }

            switch method {
            case .password, .hostedPassword, .hostedCode:
                let user = try await signUp(client, email: "ada@example.com", password: Self.password)
                userID.withLock { $0 = try? decodeClaims(user.accessToken)["sub"] as? String }
                await start()
                if method == .password {
                    let login = try await client.json(
                        .post, "/v1/login", ["client_id": TestServer.openClient, "email": "ada@example.com", "password": Self.password])
                    #expect(login.status == .ok, "\(login.text)")
                    tokens(login)
                } else {
                    let jar = HostedJar(client)
                    let pkce = pkcePair()
                    keep(pkce.verifier)
                    let landed: TestResponse
                    if method == .hostedPassword {
                        landed = try await Hosted.signIn(
                            jar, Hosted.request(challenge: pkce.challenge), email: "ada@example.com", password: Self.password)
                    } else {
                        let page = try await jar.open(Hosted.request(challenge: pkce.challenge))
                        let sent = try await jar.submit(
                            try #require(HostedJar.action(page, form: "otp")), [("identifier", "ada@example.com")],
                            csrf: HostedJar.csrf(page))
                        let otp = try await code("ada@example.com", "otp")
                        landed = try await jar.submit(
                            try #require(HostedJar.action(sent, form: "otp-verify")), [("identifier", "ada@example.com"), ("code", otp)],
                            csrf: HostedJar.csrf(sent))
                    }
                    let authorization = try #require(HostedJar.query(landed)["code"], "\(landed.status) \(landed.text)")
                    keep(authorization, jar.cookies["gh_session"], jar.cookies["gh_flow"])
                    let exchanged = try await Hosted.exchange(client, code: authorization, verifier: pkce.verifier)
                    #expect(exchanged.status == .ok, "\(exchanged.text)")
                    tokens(exchanged)
                }
            case .mailCode, .textCode:
                let (field, value) = method == .mailCode ? ("email", "otto@example.com") : ("phone", "+4791234567")
                for round in 0..<2 {
                    // The first round makes the account; the second is the sign-in under test.
                    if round == 1 {
                        await start()
                        // Past the resend cooldown.
                        server.clock.advance(by: 120)
                    }
                    let sent = try await client.json(.post, "/v1/otp", ["client_id": "otp-app", field: value])
                    #expect(sent.status == .ok || sent.status == .accepted, "\(sent.text)")
                    let otp = try await code(value, "otp")
                    let signedIn = try await client.json(.post, "/v1/otp/verify", ["client_id": "otp-app", field: value, "code": otp])
                    #expect(signedIn.status == .ok || signedIn.status == .created, "\(signedIn.text)")
                    tokens(signedIn)
                    userID.withLock { $0 = try? owner(signedIn) }
                }
            case .verificationCode:
                let made = try await client.json(
                    .post, "/v1/signup", ["client_id": "verified", "email": "vera@example.com", "password": Self.password])
                userID.withLock { $0 = (made.object["user"] as? [String: Any])?["id"] as? String }
                let mailed = try await code("vera@example.com", "verification")
                await start()
                let verified = try await client.json(
                    .post, "/v1/verify", ["client_id": "verified", "email": "vera@example.com", "code": mailed])
                #expect(verified.status == .ok, "\(verified.text)")
                tokens(verified)
            case .recovery:
                let user = try await signUp(client, email: "rae@example.com", password: Self.password)
                userID.withLock { $0 = try? decodeClaims(user.accessToken)["sub"] as? String }
                _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": "rae@example.com"])
                let mailed = try await code("rae@example.com", "recovery")
                await start()
                let recovered = try await client.json(
                    .post, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": "rae@example.com", "code": mailed])
                #expect(recovered.status == .ok, "\(recovered.text)")
                tokens(recovered)
            case .deviceAuthenticator:
                let user = try await signUp(client, email: "dev@example.com", password: Self.password)
                userID.withLock { $0 = try? decodeClaims(user.accessToken)["sub"] as? String }
                var device = TestDevice()
                #expect(try await client.register(&device, bearer: user.accessToken).status == .created)
                let keyID = Base64URL.encode(Data(SHA256.hash(data: device.key.publicKey.x963Representation)))
                keep(device.publicKey, keyID, "\(device.deviceID):\(keyID)", AuditEvent.account(of: "\(device.deviceID):\(keyID)"))
                await start()
                let challenge = try await client.challenge(device)
                let signature = try device.signature(for: challenge)
                keep(signature, challenge.string("challenge"))
                let answered = try await client.json(
                    .post, "/v1/authenticators/authenticate",
                    ["client_id": TestServer.openClient, "challenge_id": challenge.string("challenge_id") ?? "", "signature": signature])
                #expect(answered.status == .ok, "\(answered.text)")
                tokens(answered)
            case .socialIDToken:
                for round in 0..<2 {
                    if round == 1 { await start() }
                    let nonce = "n-" + UUID().uuidString
                    let token = try idp.token(
                        idp.claims(subject: "s-9", audience: Self.app, nonce: nonce, email: "ida@example.com", now: server.clock.now()))
                    keep(token, nonce)
                    let signedIn = try await client.json(
                        .post, "/v1/social/local/token", ["client_id": "social", "id_token": token, "nonce": nonce])
                    #expect(signedIn.status == (round == 0 ? .created : .ok), "\(signedIn.text)")
                    tokens(signedIn)
                    userID.withLock { $0 = try? owner(signedIn) }
                }
            case .socialAccessToken:
                for round in 0..<2 {
                    if round == 1 { await start() }
                    let token = try await fake.token("github", clientID: SocialFixtures.githubApp.0, user: "octo")
                    keep(token)
                    let signedIn = try await client.json(.post, "/v1/social/github/token", ["client_id": "social", "access_token": token])
                    #expect(signedIn.status == (round == 0 ? .created : .ok), "\(signedIn.text)")
                    tokens(signedIn)
                    userID.withLock { $0 = try? owner(signedIn) }
                }
            }
            try await drain(server)
        }
        let user = try #require(userID.withLock { $0 })
        let seen = Array(await receiver.received.dropFirst(mark.withLock { $0 }))
        let hooks = seen.filter { $0.path == "/hook" }
        #expect(!hooks.isEmpty, "\(method) reached no hook")
        for request in hooks {
            let data = request.json["data"] as? [String: Any] ?? [:]
            #expect(data["user_id"] as? String == user, "\(method): \(request.json["type"] ?? "?") without the user: \(request.text)")
        }
        let kept = secrets.withLock { $0 }.filter { $0.count >= 6 }
        for request in seen {
            let everything = request.text + " " + request.headers.values.joined(separator: " ")
            for secret in kept {
                #expect(!everything.contains(secret), "\(method): a secret or key reached \(request.path): \(request.text)")
            }
        }
        await receiver.stop()
        await jwks.stop()
    }

    func drain(_ server: TestServer) async throws {
        for _ in 0..<50 where try await server.deliverMail() > 0 {}
    }
}
