import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HummingbirdTesting
import Synchronization
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
    import GatehouseServer
    import HTTPTypes
#endif

/// oidc-provider-mock (PyPI): a real OpenID Connect provider on 127.0.0.1, RS256 keys at its `/jwks`.
/// The ID tokens come from its own authorization-code flow (`scripts/oidc/mint_id_token.py`).
struct MockOIDCProvider {
    let process: Process
    let port: Int
    var issuer: String { "http://127.0.0.1:\(port)" }

    static let mintScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/oidc/mint_id_token.py")

    static func available() async throws -> Bool {
        try TestTools.require(
            try await TestTools.pythonHas("oidc_provider_mock", "httpx"), what: "oidc-provider-mock",
            install: "pip install oidc-provider-mock")
    }

    struct MockUnavailable: Error, CustomStringConvertible {
        var description: String { "oidc-provider-mock did not start" }
    }

    static func start() async throws -> MockOIDCProvider {
        let port = try await HookServer.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "oidc_provider_mock", "--port", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await Subprocess.launch(process)
        let provider = MockOIDCProvider(process: process, port: port)
        let discovery = URL(string: provider.issuer + "/.well-known/openid-configuration")!
        let answered: Bool? = try await eventually {
            let response = try? await URLSession.shared.data(from: discovery).1
            return (response as? HTTPURLResponse)?.statusCode == 200 ? true : nil
        }
        if answered != nil { return provider }
        kill(process.processIdentifier, SIGKILL)
        throw MockUnavailable()
    }

    func idToken(audience: String, subject: String, email: String, verified: Bool, nonce: String) async throws -> String {
        let result = try await Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", Self.mintScript.path, issuer, audience, subject, email, verified ? "true" : "false", nonce])
        #expect(result.status == 0, "\(result.output)")
        return try #require(result.output.split(separator: "\n").last.map(String.init))
    }

    /// The person's claims at the provider (an unknown subject would get its id as email).
    func putUser(_ subject: String, _ claims: [String: any Sendable]) async throws {
        let answer = try await NoRedirectHTTP.send(
            "PUT", URL(string: issuer + "/users/" + subject)!, body: try JSONSerialization.data(withJSONObject: claims),
            headers: ["Content-Type": "application/json"])
        #expect((200..<300).contains(answer.status), "\(answer.text)")
    }

    /// SIGKILL: uvicorn waits for open connections on SIGTERM, and `waitUntilExit` spins a core
    /// while it waits on Linux.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
    }
}

@Suite("Social sign-in with ID tokens")
struct SocialSignInTests {
    static let app = "gatehouse-app"

    /// A server whose `social` client offers `providers`, from a providers file like an operator's.
    static func server(providers: [[String: Any]], enable: [String]) async throws -> TestServer {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["providers": providers]).write(to: file)
        let server = try await TestServer.startOpen(.sqlite) { $0.socialFile = file.path }
        try await server.createClient(
            id: "social", settings: ["email_verification=off", "social_providers=\(enable.joined(separator: ","))"])
        return server
    }

    static func signIn(_ client: some TestClientProtocol, provider: String, token: String, nonce: String) async throws -> TestResponse {
        try await client.json(.post, "/v1/social/\(provider)/token", ["client_id": "social", "id_token": token, "nonce": nonce])
    }

    @Test(
        "SO-1: a real OpenID provider's ID token (RS256, authorization-code flow with a nonce) signs up once (201, is_new) and signs in after (200, not new, same user); a replayed nonce is refused; the client lists the provider; amr is fed",
        .enabled("needs oidc-provider-mock") { try await MockOIDCProvider.available() })
    func realProvider() async throws {
        let mock = try await MockOIDCProvider.start()
        defer { mock.stop() }
        let server = try await Self.server(
            providers: [["id": "mock", "type": "oidc", "issuer": mock.issuer, "client_ids": [Self.app]]], enable: ["mock"])
        try await server.withRouter { client in
            let info = try await client.json(.get, "/v1/client?client_id=social")
            #expect(info.object["social_providers"] as? [String] == ["mock"])

            let firstNonce = "n-" + UUID().uuidString
            let first = try await mock.idToken(
                audience: Self.app, subject: "alice", email: "Alice@Example.com", verified: true, nonce: firstNonce)
            let created = try await Self.signIn(client, provider: "mock", token: first, nonce: firstNonce)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.object["is_new"] as? Bool == true)
            let user = try #require(created.object["user"] as? [String: Any])
            #expect(user["email"] as? String == "alice@example.com" && user["email_verified"] as? Bool == true)
            #expect((user["profile"] as? [String: Any])?["given_name"] as? String == "Ada")
            let claims = try decodeClaims(try #require(created.string("access_token")))
            #expect(claims["amr"] as? [String] == ["fed"])

            let secondNonce = "n-" + UUID().uuidString
            let second = try await mock.idToken(
                audience: Self.app, subject: "alice", email: "alice@example.com", verified: true, nonce: secondNonce)
            let again = try await Self.signIn(client, provider: "mock", token: second, nonce: secondNonce)
            #expect(again.status == .ok && again.object["is_new"] as? Bool == false, "\(again.text)")
            #expect((again.object["user"] as? [String: Any])?["id"] as? String == user["id"] as? String)

            let replay = try await Self.signIn(client, provider: "mock", token: first, nonce: firstNonce)
            #expect(replay.status == .unauthorized && replay.string("code") == "invalid_provider_token")
            // A token for another app at the same provider.
            let otherNonce = "n-" + UUID().uuidString
            let other = try await mock.idToken(
                audience: "someone-else", subject: "alice", email: "alice@example.com", verified: true, nonce: otherNonce)
            #expect(try await Self.signIn(client, provider: "mock", token: other, nonce: otherNonce).status == .unauthorized)

            let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter {
                $0.method == "social:mock"
            }
            // The test clock stands still: events of one millisecond come in id order, so compare as a multiset.
            #expect(events.map(\.type).sorted() == ["sign_in.failed", "sign_in.failed", "user.created", "user.signed_in"])
            #expect(events.filter { $0.type == "sign_in.failed" }.compactMap(\.reason).sorted() == ["audience", "replayed"])
        }
    }

    @Test(
        "SO-2: forged and misused ID tokens are refused: other audience, other issuer, expired, not yet valid, alg none, HS256 with the public key, unknown kid, a foreign key under a known kid, wrong nonce, replayed nonce, a provider the client does not offer; Apple's hashed nonce is accepted; unknown kids refetch the keys at most once a minute, a failed refetch counted, while the known key still signs in"
    )
    func attacks() async throws {
        let issuer = TestIDTokenIssuer()
        // Switched to 503 for the last part: a provider whose key endpoint fails.
        let failing = Mutex(false)
        let jwks = try await HookServer.start { _ in
            failing.withLock { $0 } ? HookServer.Answer(status: 503, body: "{}") : HookServer.Answer(body: issuer.jwks)
        }
        let server = try await Self.server(
            providers: [
                [
                    "id": "local", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
                    "client_ids": [Self.app, "web-app"],
                ],
                [
                    "id": "other", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
                    "client_ids": [Self.app],
                ],
            ],
            enable: ["local"])
        try await server.withRouter { client in
            func attempt(_ token: String, nonce: String, provider: String = "local") async throws -> TestResponse {
                try await Self.signIn(client, provider: provider, token: token, nonce: nonce)
            }
            func fresh() -> String { "n-" + UUID().uuidString }
            let now = server.clock.now()

            var refused: [(String, String, String)] = []
            var nonce = fresh()
            var claims = issuer.claims(subject: "s1", audience: "not-our-app", nonce: nonce, now: now)
            refused.append(("other audience", try issuer.token(claims), nonce))
            nonce = fresh()
            claims = issuer.claims(subject: "s1", audience: Self.app, nonce: nonce, now: now)
            claims["iss"] = "https://evil.example"
            refused.append(("other issuer", try issuer.token(claims), nonce))
            nonce = fresh()
            claims = issuer.claims(subject: "s1", audience: Self.app, nonce: nonce, now: now)
            claims["exp"] = Int(now.timeIntervalSince1970) - 120
            refused.append(("expired", try issuer.token(claims), nonce))
            nonce = fresh()
            claims = issuer.claims(subject: "s1", audience: Self.app, nonce: nonce, now: now)
            claims["iat"] = Int(now.timeIntervalSince1970) + 3600
            refused.append(("issued in the future", try issuer.token(claims), nonce))
            nonce = fresh()
            claims = issuer.claims(subject: "s1", audience: Self.app, nonce: nonce, now: now)
            refused.append(("alg none", try issuer.unsignedToken(claims), nonce))
            refused.append(("HS256 keyed with the public key", try issuer.hmacToken(claims), nonce))
            refused.append(("unknown kid", try issuer.token(claims, kid: "rotated-away", signer: P256.Signing.PrivateKey()), nonce))
            refused.append(("a foreign key under our kid", try issuer.token(claims, signer: P256.Signing.PrivateKey()), nonce))
            refused.append(("wrong nonce", try issuer.token(claims), "not-the-nonce"))
            refused.append(("garbage", "a.b.c", nonce))
            for (what, token, sentNonce) in refused {
                let answer = try await attempt(token, nonce: sentNonce)
                #expect(
                    answer.status == .unauthorized && answer.string("code") == "invalid_provider_token",
                    "\(what): \(answer.status) \(answer.text)")
            }
            let notOffered = try await attempt(try issuer.token(claims), nonce: nonce, provider: "other")
            #expect(notOffered.status == .forbidden && notOffered.string("code") == "not_enabled")
            let unknown = try await attempt(try issuer.token(claims), nonce: nonce, provider: "nope")
            #expect(unknown.status == .forbidden)
            #expect(
                try await client.json(.post, "/v1/social/local/token", ["client_id": "social", "id_token": "x"]).status
                    == .unprocessableContent)

            // Nothing above signed anyone up.
            #expect(try await server.persistence.read { try await $0.users.count() } == 0)

            // The control: the same claims, properly signed, work once.
            let good = try await attempt(try issuer.token(claims), nonce: nonce)
            #expect(good.status == .created && good.object["is_new"] as? Bool == true, "\(good.text)")
            let replayed = try await attempt(try issuer.token(claims), nonce: nonce)
            #expect(replayed.status == .unauthorized, "a nonce is accepted once")
            // Apple puts the SHA-256 of the raw nonce in the token; the app sends the raw one.
            let raw = fresh()
            let hashed = Data(SHA256.hash(data: Data(raw.utf8))).map { String(format: "%02x", $0) }.joined()
            let apple = try await attempt(
                try issuer.token(issuer.claims(subject: "s2", audience: "web-app", nonce: hashed, now: now)), nonce: raw)
            #expect(apple.status == .created, "\(apple.text)")

            // Counted from here, after sign-ins that worked: on a loaded host the first fetch can outlive
            // its 5 s timeout and be made again, which is not what this part is about. The clock stops
            // following the real one (a loaded host's real minute would allow a refetch of its own), and
            // one made-up kid a minute on anchors the refetch minute here.
            server.clock.freeze()
            server.clock.advance(by: 61)
            let anchor = fresh()
            _ = try await attempt(
                try issuer.token(
                    issuer.claims(subject: "s3", audience: Self.app, nonce: anchor, now: server.clock.now()), kid: "k-\(anchor)"),
                nonce: anchor)
            let before = await jwks.requests(to: "/jwks").count
            // A flood of made-up kids, sequential and then 20 at once a minute later, fetched the keys once
            // more (one refetch a minute; concurrent callers share a fetch).
            for _ in 0..<5 {
                let n = fresh()
                _ = try await attempt(
                    try issuer.token(issuer.claims(subject: "s3", audience: Self.app, nonce: n, now: now), kid: "k-\(n)"), nonce: n)
            }
            server.clock.advance(by: 61)
            let later = server.clock.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let n = fresh()
                        let answer = try await attempt(
                            try issuer.token(issuer.claims(subject: "s4", audience: Self.app, nonce: n, now: later), kid: "k-\(n)"),
                            nonce: n)
                        #expect(answer.status == .unauthorized)
                    }
                }
                try await group.waitForAll()
            }
            let fetches = await jwks.requests(to: "/jwks").count
            #expect(fetches - before <= 1, "\(fetches - before) fetches")

            // The provider fails: a minute on, one refetch is tried, and while the minute lasts unknown kids
            // ask it no more (a failed refetch counts as the minute's), and the known key still signs in.
            failing.withLock { $0 = true }
            server.clock.advance(by: 61)
            let failingNow = server.clock.now()
            for _ in 0..<5 {
                let n = fresh()
                let answer = try await attempt(
                    try issuer.token(issuer.claims(subject: "s5", audience: Self.app, nonce: n, now: failingNow), kid: "k-\(n)"),
                    nonce: n)
                #expect(answer.status == .unauthorized || answer.status == .serviceUnavailable || answer.status == .badGateway)
            }
            #expect(await jwks.requests(to: "/jwks").count == fetches + 1)
            let n = fresh()
            let known = try await attempt(
                try issuer.token(issuer.claims(subject: "s6", audience: Self.app, nonce: n, now: failingNow)), nonce: n)
            #expect(known.status == .created, "\(known.text)")
        }
        await jwks.stop()
    }

    @Test(
        "SO-3: a provider email matching an account links only when both sides proved it; otherwise identity_link_required and nothing changes; a linked account signs in both ways; password sign-up and login carry is_new too"
    )
    func linking() async throws {
        let issuer = TestIDTokenIssuer()
        // Switched to 503 for the last part: a provider whose key endpoint fails.
        let failing = Mutex(false)
        let jwks = try await HookServer.start { _ in
            failing.withLock { $0 } ? HookServer.Answer(status: 503, body: "{}") : HookServer.Answer(body: issuer.jwks)
        }
        let server = try await Self.server(
            providers: [
                [
                    "id": "local", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
                    "client_ids": [Self.app],
                ]
            ],
            enable: ["local"])
        try await server.withRouter { client in
            func social(subject: String, email: String, verified: Bool) async throws -> TestResponse {
                let nonce = "n-" + UUID().uuidString
                let token = try issuer.token(
                    issuer.claims(
                        subject: subject, audience: Self.app, nonce: nonce, email: email, emailVerified: verified, now: server.clock.now()))
                return try await Self.signIn(client, provider: "local", token: token, nonce: nonce)
            }
            let signup = try await client.json(
                .post, "/v1/signup", ["client_id": "social", "email": "owner@example.com", "password": "correct horse battery"])
            #expect(signup.status == .created && signup.object["is_new"] as? Bool == true)
            let login = try await client.json(
                .post, "/v1/login", ["client_id": "social", "email": "owner@example.com", "password": "correct horse battery"])
            #expect(login.object["is_new"] as? Bool == false)
            let ownerID = try #require((signup.object["user"] as? [String: Any])?["id"] as? String)

            // The local address is unproved: a provider saying it is verified takes nothing over.
            let takeover = try await social(subject: "attacker", email: "owner@example.com", verified: true)
            #expect(takeover.status == .conflict && takeover.string("code") == "identity_link_required", "\(takeover.text)")
            // Now the owner proved it; a provider that did not prove it still links nothing.
            try await server.persistence.transaction { stores in
                var owner = try #require(try await stores.users.find(id: UUID(uuidString: ownerID)!))
                owner.emailVerified = true
                try await stores.users.update(owner)
            }
            #expect(try await social(subject: "attacker", email: "owner@example.com", verified: false).status == .conflict)
            let credentials = try await server.persistence.read {
                try await $0.credentials.list(userID: UUID(uuidString: ownerID)!, type: .oidc)
            }
            #expect(credentials.isEmpty)

            // Both proved: linked, not new, the same account.
            let linked = try await social(subject: "owner-at-provider", email: "owner@example.com", verified: true)
            #expect(linked.status == .ok && linked.object["is_new"] as? Bool == false, "\(linked.text)")
            #expect((linked.object["user"] as? [String: Any])?["id"] as? String == ownerID)
            // Later the provider's email changes: the subject still finds the account.
            let renamed = try await social(subject: "owner-at-provider", email: "new-address@example.com", verified: true)
            #expect((renamed.object["user"] as? [String: Any])?["id"] as? String == ownerID)
            #expect(
                try await client.json(
                    .post, "/v1/login", ["client_id": "social", "email": "owner@example.com", "password": "correct horse battery"]
                ).status == .ok)
            // An unknown address makes a new account, unverified when the provider says so.
            let fresh = try await social(subject: "newcomer", email: "newcomer@example.com", verified: false)
            #expect(fresh.status == .created && (fresh.object["user"] as? [String: Any])?["email_verified"] as? Bool == false)
        }
        await jwks.stop()
    }
}
