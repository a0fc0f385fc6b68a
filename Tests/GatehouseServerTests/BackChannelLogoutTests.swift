import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// OpenID Connect Back-Channel Logout 1.0: a real HTTP receiver gets each client's logout token when
/// the browser session it signed in through ends.
@Suite("Back-channel logout")
struct BackChannelLogoutTests {
    /// A receiver (rp-a at `/hook`, rp-b at `/other`) that refuses its first delivery to rp-a (so the
    /// outbox must retry) and takes the rest.
    static func receiver() async throws -> HookServer {
        let refusedOnce = RefusedOnce()
        return try await HookServer.start { received in
            if received.path == "/hook", refusedOnce.first() { return HookServer.Answer(status: 500) }
            return HookServer.Answer(status: 200)
        }
    }

    /// Two clients that listen (rp-a RS256, rp-b ES256) and one that does not, on `server`.
    static func clients(_ server: TestServer, receiver: HookServer) async throws -> String {
        let base = "http://127.0.0.1:\(receiver.port)"
        let a = try await server.createClient(
            id: "rp-a", kind: .confidential, redirectURIs: ["https://rp-a.example/cb"],
            settings: ["email_verification=off", "backchannel_logout_uri=\(base)/hook"])
        _ = try await server.createClient(
            id: "rp-b", redirectURIs: ["https://rp-b.example/cb"],
            settings: ["email_verification=off", "backchannel_logout_uri=\(base)/other", "id_token_signed_response_alg=ES256"])
        _ = try await server.createClient(id: "rp-c", redirectURIs: ["https://rp-c.example/cb"], settings: ["email_verification=off"])
        return try #require(a.secret)
    }

    /// Signs a browser in to the three clients (rp-a with its password, the others by single sign-on)
    /// and returns each client's ID token.
    static func signIn(
        _ client: some TestClientProtocol, jar: HostedJar, user: SignedIn, secret: String
    ) async throws -> [String: String] {
        try await signInTokens(client, jar: jar, user: user, secret: secret).mapValues { try #require($0.string("id_token")) }
    }

    /// The same, with each client's whole token response.
    static func signInTokens(
        _ client: some TestClientProtocol, jar: HostedJar, user: SignedIn, secret: String
    ) async throws -> [String: TestResponse] {
        var answers: [String: TestResponse] = [:]
        for (id, redirect) in [
            ("rp-a", "https://rp-a.example/cb"), ("rp-b", "https://rp-b.example/cb"), ("rp-c", "https://rp-c.example/cb"),
        ] {
            let pkce = pkcePair()
            let uri = Hosted.request(id, redirect: redirect, challenge: pkce.challenge)
            let answer =
                id == "rp-a" ? try await Hosted.signIn(jar, uri, email: user.email, password: user.password) : try await jar.open(uri)
            let code = try #require(HostedJar.query(answer)["code"], "\(id): \(answer.text)")
            var fields = ["grant_type": "authorization_code", "code": code, "client_id": id, "redirect_uri": redirect]
            fields["code_verifier"] = pkce.verifier
            if id == "rp-a" { fields["client_secret"] = secret }
            let tokens = try await client.form("/oauth/token", fields)
            #expect(tokens.string("id_token") != nil, "\(id): \(tokens.text)")
            answers[id] = tokens
        }
        return answers
    }

    /// A logout token as a relying party checks it (§2.6): signature against the JWKS with the
    /// client's algorithm, `typ`, `iss`, `aud`, `iat`/`exp`, the event, `sid` and `sub`, and no `nonce`.
    static func verify(
        _ token: String, jwks: [[String: Any]], client: String, algorithm: String, idToken: String, issuer: String, now: Date
    ) throws {
        let (header, _) = try JWSCheck.verify(token, jwks: jwks)
        #expect(header["typ"] as? String == "logout+jwt" && header["alg"] as? String == algorithm, "\(header)")
        let claims = try decodeClaims(token)
        let id = try decodeClaims(idToken)
        #expect(claims["iss"] as? String == issuer && claims["aud"] as? String == client)
        #expect(claims["sid"] as? String == id["sid"] as? String && claims["sub"] as? String == id["sub"] as? String)
        #expect((claims["events"] as? [String: Any])?["http://schemas.openid.net/event/backchannel-logout"] is [String: Any])
        #expect(claims["nonce"] == nil && (claims["jti"] as? String)?.isEmpty == false)
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(abs(Double(iat) - now.timeIntervalSince1970) < 5 && exp > iat && exp - iat <= 300)
    }

    static func logoutToken(_ received: HookServer.Received) throws -> String {
        #expect(received.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
        var components = URLComponents()
        components.percentEncodedQuery = received.text.replacingOccurrences(of: "+", with: "%20")
        return try #require(components.queryItems?.first { $0.name == "logout_token" }?.value)
    }

    @Test(
        "BCL-1: RP-initiated logout ends the browser session, and each client it signed in to that registered a backchannel_logout_uri gets a logout token at a real HTTP receiver (signed with the client's algorithm, iss, aud, the event, the ID token's sid and sub, no nonce); a receiver that answers 500 gets it again after the outbox's backoff; a client without the URI gets nothing"
    )
    func rpLogout() async throws {
        let receiver = try await Self.receiver()
        let server = try await TestServer.startOpen(.sqlite)
        do {
            let secret = try await Self.clients(server, receiver: receiver)
            try await server.withRouter { client in
                let user = try await signUp(client, clientID: "rp-c")
                let jar = HostedJar(client)
                let idTokens = try await Self.signIn(client, jar: jar, user: user, secret: secret)
                let logout = try await jar.send(
                    .get,
                    "/oauth/logout?" + FormEncoding.encode([("id_token_hint", try #require(idTokens["rp-a"])), ("client_id", "rp-a")]))
                #expect(logout.status == .ok, "\(logout.text)")

                // The first round: rp-b takes its token, rp-a's receiver fails and the row waits.
                _ = try await server.deliverMail()
                let firstB = await receiver.requests(to: "/other").count
                let firstA = await receiver.requests(to: "/hook").count
                #expect(firstB == 1 && firstA == 1)
                let waiting = try await server.persistence.read { try await $0.outbox.list(status: .pending, channel: .logout, limit: 10) }
                #expect(waiting.count == 1 && waiting.first?.channel == .logout && waiting.first?.attempts == 1, "\(waiting)")
                // Before its backoff nothing is resent; after it, rp-a has its token.
                _ = try await server.deliverMail()
                let stillA = await receiver.requests(to: "/hook").count
                #expect(stillA == 1)
                server.clock.advance(by: 60)
                _ = try await server.deliverMail()
                let toA = await receiver.requests(to: "/hook")
                let toB = await receiver.requests(to: "/other")
                let all = await receiver.received.count
                #expect(toA.count == 2 && toB.count == 1 && all == 3)

                let jwks = try #require((try await client.json(.get, "/.well-known/jwks.json")).object["keys"] as? [[String: Any]])
                let now = server.clock.now()
                try Self.verify(
                    try Self.logoutToken(try #require(toA.last)), jwks: jwks, client: "rp-a", algorithm: "RS256",
                    idToken: try #require(idTokens["rp-a"]), issuer: Hosted.issuer, now: now)
                try Self.verify(
                    try Self.logoutToken(try #require(toB.first)), jwks: jwks, client: "rp-b",
                    algorithm: "ES256", idToken: try #require(idTokens["rp-b"]), issuer: Hosted.issuer, now: now.addingTimeInterval(-60))
            }
        } catch {
            await receiver.stop()
            await server.stop()
            throw error
        }
        await receiver.stop()
        await server.stop()
    }

    @Test(
        "BCL-2: a sign-out everywhere (POST /v1/logout global), a password change and an operator's sign-out each tell the listening clients of the sessions they end, once per session; a client's own ending of one session (POST /v1/logout local, RFC 7009 revocation of its refresh token) tells that client of that session alone",
        arguments: ["global", "password", "admin", "local", "revoke"])
    func otherEndings(_ how: String) async throws {
        let receiver = try await HookServer.start { _ in HookServer.Answer(status: 200) }
        let server = try await TestServer.startOpen(.sqlite)
        do {
            let secret = try await Self.clients(server, receiver: receiver)
            try await server.withRouter { client in
                let user = try await signUp(client, clientID: "rp-c")
                let answers = try await Self.signInTokens(client, jar: HostedJar(client), user: user, secret: secret)
                let idTokens = try answers.mapValues { try #require($0.string("id_token")) }
                // How many logout tokens rp-a (at /hook) and rp-b (at /other) should get.
                var expected = (1, 1)
                switch how {
                case "global":
                    let answer = try await client.json(.post, "/v1/logout", ["scope": "global"], bearer: user.accessToken)
                    #expect(answer.status == .noContent || answer.status == .ok, "\(answer.text)")
                case "password":
                    let answer = try await client.json(
                        .put, "/v1/me/password", ["password": "a new passphrase here", "current_password": user.password],
                        bearer: user.accessToken)
                    #expect(answer.status == .noContent || answer.status == .ok, "\(answer.text)")
                case "local":
                    let access = try #require(answers["rp-b"]?.string("access_token"))
                    let answer = try await client.json(.post, "/v1/logout", ["scope": "local"], bearer: access)
                    #expect(answer.status == .noContent || answer.status == .ok, "\(answer.text)")
                    expected = (0, 1)
                case "revoke":
                    let refresh = try #require(answers["rp-a"]?.string("refresh_token"))
                    let answer = try await client.form("/oauth/revoke", ["token": refresh], basic: ("rp-a", secret))
                    #expect(answer.status == .ok, "\(answer.text)")
                    expected = (1, 0)
                default:
                    let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
                    let ended = try await UserAdmin(services: server.services).signOut(
                        id: try #require(UUID(uuidString: userID)), actor: .commandLine)
                    #expect(ended >= 3)
                }
                _ = try await server.deliverMail()
                let a = await receiver.requests(to: "/hook")
                let b = await receiver.requests(to: "/other")
                #expect(a.count == expected.0 && b.count == expected.1, "\(how): \(a.count) \(b.count)")
                for (received, id) in [(a.first, "rp-a"), (b.first, "rp-b")] {
                    guard let received else { continue }
                    let sid = try decodeClaims(try Self.logoutToken(received))["sid"] as? String
                    #expect(sid == (try decodeClaims(try #require(idTokens[id])))["sid"] as? String)
                }
            }
        } catch {
            await receiver.stop()
            await server.stop()
            throw error
        }
        await receiver.stop()
        await server.stop()
    }

    @Test(
        "BCL-3: two nodes on one PostgreSQL: the browser signs out on one node and the other node's outbox delivers the logout token",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoNodes() async throws {
        let receiver = try await HookServer.start { _ in HookServer.Answer(status: 200) }
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("gh-bcl-\(UUID())")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: shared) }
        let secretFile = shared.appendingPathComponent("secret").path
        let clock = TestClock()
        let a = try await TestServer.startOpen(.postgres, clock: clock) { $0.secretFile = secretFile }
        let b: TestServer
        do {
            b = try await TestServer.start(.postgres, clock: clock) {
                $0.databaseURL = a.server.configuration.databaseURL
                $0.secretFile = secretFile
            }
        } catch {
            await a.stop()
            await receiver.stop()
            throw error
        }
        do {
            let secret = try await Self.clients(a, receiver: receiver)
            try await a.withRouter { client in
                let user = try await signUp(client, clientID: "rp-c")
                let jar = HostedJar(client)
                let idTokens = try await Self.signIn(client, jar: jar, user: user, secret: secret)
                let logout = try await jar.send(
                    .get,
                    "/oauth/logout?" + FormEncoding.encode([("id_token_hint", try #require(idTokens["rp-a"])), ("client_id", "rp-a")]))
                #expect(logout.status == .ok)
                #expect(try await b.deliverMail() == 2)
                let toA = await receiver.requests(to: "/hook").count
                let toB = await receiver.requests(to: "/other").count
                #expect(toA == 1 && toB == 1)
                #expect(try await a.deliverMail() == 0)
            }
        } catch {
            await b.stop()
            await a.stop()
            await receiver.stop()
            throw error
        }
        await b.stop()
        await a.stop()
        await receiver.stop()
    }
}

/// True exactly once.
final class RefusedOnce: Sendable {
    private let used = Mutex(false)
    func first() -> Bool {
        used.withLock { was in
            defer { was = true }; return !was
        }
    }
}
