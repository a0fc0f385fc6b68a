import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// The browser's part of a web sign-in, one hop at a time: Gatehouse through the in-process router,
/// the provider (`provider_apis.py`) over a real socket, cookies carried by hand as a browser would.
struct WebWalk {
    let client: any TestClientProtocol
    let fake: ProviderAPIsServer

    struct Started {
        var providerURL: URL
        var cookie: String?
        var status: HTTPResponse.Status
        var text: String
    }

    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode(Secrets.randomBytes(32))
        return (verifier, Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))))
    }

    static func query(_ url: URL) -> [String: String] {
        Dictionary((URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { $1 }
    }

    /// `formEncoded: false` sends `+` as it is, as URLComponents does: the server reads it as a space.
    func start(
        _ provider: String, redirectTo: String = SocialFixtures.appRedirect, challenge: String?, state: String = "app-state-1",
        formEncoded: Bool = true, clientID: String = "social"
    ) async throws -> Started {
        var items = [
            URLQueryItem(name: "client_id", value: clientID), URLQueryItem(name: "redirect_to", value: redirectTo),
            URLQueryItem(name: "state", value: state),
        ]
        if let challenge {
            items += [URLQueryItem(name: "code_challenge", value: challenge), URLQueryItem(name: "code_challenge_method", value: "S256")]
        }
        var components = URLComponents(string: "/v1/social/\(provider)/start")!
        components.queryItems = items
        if formEncoded { components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B") }
        let answer = try await client.executeRequest(uri: components.string!, method: .get, headers: [:], body: nil)
        let location = answer.headers[.location].flatMap(URL.init(string:)) ?? URL(string: "about:blank")!
        let cookie = answer.headers[.setCookie].flatMap { $0.split(separator: ";").first.map(String.init) }
        return Started(providerURL: location, cookie: cookie, status: answer.status, text: String(buffer: answer.body))
    }

    /// The person at the provider's page: approves as `user` (or cancels); answers the provider's
    /// redirect to Gatehouse's callback.
    func approve(_ started: Started, user: String, deny: Bool = false) async throws -> URL {
        let fields = (URLComponents(url: started.providerURL, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
            ($0.name, $0.value ?? "")
        }
        var form = fields + [("user", user)]
        if deny { form.append(("deny", "1")) }
        var bare = URLComponents(url: started.providerURL, resolvingAgainstBaseURL: false)!
        bare.query = nil
        let answer = try await NoRedirectHTTP.form(bare.url!, form)
        return try #require(answer.location, "provider answered \(answer.status): \(answer.text)")
    }

    /// Gatehouse's callback, as the browser follows the provider's redirect (with or without the cookie).
    func callback(_ url: URL, cookie: String?) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let cookie { headers[.cookie] = cookie }
        let path = url.path + (url.query.map { "?" + $0 } ?? "")
        return try await client.executeRequest(uri: path, method: .get, headers: headers, body: nil)
    }

    /// The app's `/oauth/token` exchange with its verifier.
    func exchange(
        code: String, verifier: String, redirect: String = SocialFixtures.appRedirect, clientID: String = "social"
    ) async throws -> TestResponse {
        try await client.form(
            "/oauth/token",
            ["grant_type": "authorization_code", "code": code, "client_id": clientID, "redirect_uri": redirect, "code_verifier": verifier])
    }

    /// start → approve → callback: the URL the browser lands on at the app.
    func signIn(
        _ provider: String, user: String, pkce: (verifier: String, challenge: String), state: String = "app-state-1",
        formEncoded: Bool = true, clientID: String = "social"
    ) async throws -> URL {
        let started = try await start(provider, challenge: pkce.challenge, state: state, formEncoded: formEncoded, clientID: clientID)
        #expect(started.status == .found, "\(started.text)")
        let back = try await approve(started, user: user)
        let landed = try await callback(back, cookie: started.cookie)
        #expect(landed.status == .found, "\(landed.text)")
        return try #require(landed.headers[.location].flatMap(URL.init(string:)))
    }
}

@Suite("Social sign-in through the browser")
struct SocialWebFlowTests {
    @Test(
        "SO-5: web sign-in with GitHub, X and Facebook: start binds the flow to the browser (cookie) and sends Gatehouse's own state and PKCE to the provider; the callback exchanges the provider's code with the app's secret and returns to redirect_to with a one-time code and the app's state echoed exactly; the app's code exchange with its verifier carries is_new (true, then false)"
    )
    func webFlow() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let server = try await SocialFixtures.server(fake)
        try await server.withRouter { client in
            let walk = WebWalk(client: client, fake: fake)
            var userIDs: [String: String] = [:]
            for (provider, user) in [("github", "octo"), ("x", "xena"), ("facebook", "ada"), ("acme", "olga")] {
                for round in 0..<2 {
                    let pkce = WebWalk.pkce()
                    let state = "st+ate /\(provider)?&=\(round)"
                    let landed = try await walk.signIn(provider, user: user, pkce: pkce, state: state)
                    #expect(landed.absoluteString.hasPrefix(SocialFixtures.appRedirect + "?"), "\(landed)")
                    let query = WebWalk.query(landed)
                    #expect(query["state"] == state, "the app's state comes back exactly")
                    if round == 1 {
                        // A `+` left unencoded is a space, as on /oauth/authorize and every other route.
                        let raw = try await walk.signIn(provider, user: user, pkce: WebWalk.pkce(), state: "a+b", formEncoded: false)
                        #expect(WebWalk.query(raw)["state"] == "a b", "\(raw)")
                    }
                    let code = try #require(query["code"], "\(provider): \(landed)")
                    let tokens = try await walk.exchange(code: code, verifier: pkce.verifier)
                    #expect(tokens.status == .ok, "\(provider): \(tokens.text)")
                    #expect(tokens.object["is_new"] as? Bool == (round == 0), "\(provider) round \(round): \(tokens.text)")
                    let claims = try decodeClaims(try #require(tokens.string("access_token")))
                    #expect(claims["amr"] as? [String] == ["fed"])
                    // The user comes with the answer, with what the app must still ask for.
                    let user = tokens.object["user"] as? [String: Any] ?? [:]
                    #expect(user["id"] as? String == claims["sub"] as? String && user["agreements_up_to_date"] != nil, "\(tokens.text)")
                    if let known = userIDs[provider] {
                        #expect(claims["sub"] as? String == known)
                    } else {
                        userIDs[provider] = claims["sub"] as? String
                    }
                }
            }
            #expect(Set(userIDs.values).count == 4)
            // X got Gatehouse's PKCE challenge and later its verifier, with the app's secret by basic auth.
            let seen = try await fake.requests()
            let authorize = try #require(seen.first { ($0["path"] as? String) == "/x/i/oauth2/authorize" })
            // The walk posts the provider's form, which carries the authorize request's parameters.
            let asked = authorize["body"] as? String ?? ""
            #expect(asked.contains("code_challenge_method=S256") && asked.contains("code_challenge="), "\(asked)")
            let token = try #require(seen.first { ($0["path"] as? String) == "/x/2/oauth2/token" })
            #expect((token["body"] as? String)?.contains("code_verifier=") == true)
            #expect(((token["headers"] as? [String: Any])?["authorization"] as? String)?.hasPrefix("Basic ") == true)
        }
    }

    @Test(
        "SO-6: web sign-in attacks are refused: a callback without the browser's cookie (403 page, never a redirect), a made-up or tampered state, a replayed callback, a replayed Gatehouse code, the app's wrong PKCE verifier, an unregistered or look-alike redirect_to (422 page, no redirect), a public client without PKCE; a cancel at the provider returns access_denied with the state; the operator's wrong secret returns temporarily_unavailable; an unverified provider email matching an account returns identity_link_required"
    )
    func webAttacks() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let bad: [String: Any] = [
            "id": "github-bad", "type": "github", "client_ids": [SocialFixtures.githubApp.0], "client_secret": "not-the-secret",
            "api_base": fake.base + "/github", "authorization_endpoint": fake.base + "/github/login/oauth/authorize",
            "token_endpoint": fake.base + "/github/login/oauth/access_token",
        ]
        let server = try await SocialFixtures.server(fake, extra: [bad])
        try await server.withRouter { client in
            let walk = WebWalk(client: client, fake: fake)
            let pkce = WebWalk.pkce()

            // Redirect targets are matched exactly: no prefix, no look-alike, no other scheme.
            for bad in [SocialFixtures.appRedirect + ".evil.example", "https://evil.example/cb", SocialFixtures.appRedirect + "/../x", ""] {
                let refused = try await walk.start("github", redirectTo: bad, challenge: pkce.challenge)
                #expect(
                    refused.status == .unprocessableContent && refused.providerURL.absoluteString == "about:blank",
                    "\(bad): \(refused.status)")
                #expect(refused.text.contains("<html"), "errors here are pages")
            }
            // A public client must send a PKCE challenge, and S256 only.
            #expect(try await walk.start("github", challenge: nil).status == .unprocessableContent)
            #expect(try await walk.start("github", challenge: "short").status == .unprocessableContent)
            // A provider the client does not offer.
            #expect(try await walk.start("nope", challenge: pkce.challenge).status == .forbidden)

            // No cookie: this browser did not start the flow (login CSRF) — a page, not a redirect.
            let started = try await walk.start("github", challenge: pkce.challenge)
            let back = try await walk.approve(started, user: "octo")
            let stranger = try await walk.callback(back, cookie: nil)
            #expect(stranger.status == .forbidden && stranger.headers[.location] == nil, "\(stranger.status)")
            let wrongCookie = try await walk.callback(
                back, cookie: (started.cookie?.split(separator: "=").first.map(String.init) ?? "x") + "=forged")
            #expect(wrongCookie.status == .forbidden && wrongCookie.headers[.location] == nil)
            // A tampered state names no flow.
            var tampered = URLComponents(url: back, resolvingAgainstBaseURL: false)!
            tampered.queryItems = tampered.queryItems?.map {
                $0.name == "state" ? URLQueryItem(name: "state", value: UUID().uuidString) : $0
            }
            let unknown = try await walk.callback(tampered.url!, cookie: started.cookie)
            #expect(unknown.status == .gone && unknown.headers[.location] == nil)
            // The browser that started it finishes it, once.
            let landed = try await walk.callback(back, cookie: started.cookie)
            #expect(landed.status == .found)
            let replay = try await walk.callback(back, cookie: started.cookie)
            #expect(replay.status == .gone && replay.headers[.location] == nil)
            let landedURL = try #require(landed.headers[.location].flatMap(URL.init(string:)))
            let code = try #require(WebWalk.query(landedURL)["code"])
            // The app's verifier must match its challenge; the code then is spent.
            let wrong = try await walk.exchange(code: code, verifier: WebWalk.pkce().verifier)
            #expect(wrong.status == .badRequest && wrong.string("error") == "invalid_grant")
            #expect(try await walk.exchange(code: code, verifier: pkce.verifier).string("error") == "invalid_grant")

            // A second, clean sign-in: its code works once.
            let fresh = WebWalk.pkce()
            let again = WebWalk.query(try await walk.signIn("github", user: "octo", pkce: fresh))
            let goodCode = try #require(again["code"])
            #expect(try await walk.exchange(code: goodCode, verifier: fresh.verifier).status == .ok)
            #expect(try await walk.exchange(code: goodCode, verifier: fresh.verifier).string("error") == "invalid_grant")

            // Cancel at the provider: back to the app with access_denied and the state.
            let cancelled = try await walk.start("github", challenge: pkce.challenge, state: "s-cancel")
            let denied = try await walk.callback(try await walk.approve(cancelled, user: "octo", deny: true), cookie: cancelled.cookie)
            let deniedQuery = WebWalk.query(try #require(denied.headers[.location].flatMap(URL.init(string:))))
            #expect(deniedQuery["error"] == "access_denied" && deniedQuery["state"] == "s-cancel" && deniedQuery["code"] == nil)

            // The operator's wrong secret at the provider is not the user's fault: unavailable, not a bad token.
            let misconfigured = try await walk.start("github-bad", challenge: pkce.challenge, state: "s-bad")
            let badBack = try await walk.approve(misconfigured, user: "octo")
            let badLanded = try await walk.callback(badBack, cookie: misconfigured.cookie)
            let badQuery = WebWalk.query(try #require(badLanded.headers[.location].flatMap(URL.init(string:))))
            #expect(badQuery["error"] == "temporarily_unavailable" && badQuery["state"] == "s-bad", "\(badQuery)")

            // Facebook's address matches an account: never linked silently; the app is told to sign in first.
            let signup = try await client.json(
                .post, "/v1/signup", ["client_id": "social", "email": "ada@fb.example", "password": "correct horse battery"])
            #expect(signup.status == .created)
            let link = WebWalk.query(try await walk.signIn("facebook", user: "ada", pkce: pkce, state: "s-link"))
            #expect(link["error"] == "identity_link_required" && link["state"] == "s-link" && link["code"] == nil, "\(link)")
            let credentials = try await server.persistence.read { try await $0.credentials.find(type: .oidc, identifier: "facebook:1001") }
            #expect(credentials == nil)
        }
    }
}

@Suite("Sign in with Apple through the browser")
struct AppleWebFlowTests {
    @Test(
        "SO-9: Sign in with Apple on the web: form_post to the callback moves to a same-site GET (the flow's cookie applies), the code is exchanged with a fresh ES256 client secret signed by the team's key (kid, iss team, sub Services ID, aud Apple), the ID token's nonce is the flow's, the first-sign-in name from Apple's user field is kept, a private-relay address is a verified email"
    )
    func appleWeb() async throws {
        let issuer = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: issuer.jwks) }
        let idToken = Mutex("")
        let tokenEndpoint = try await HookServer.start { _ in
            HookServer.Answer(body: #"{"access_token":"apple-at","token_type":"Bearer","id_token":"\#(idToken.withLock { $0 })"}"#)
        }
        let teamKey = P256.Signing.PrivateKey()
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey-\(UUID().uuidString).p8")
        try teamKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let apple: [String: Any] = [
            "id": "apple", "type": "apple", "client_ids": ["com.example.app", "com.example.web"], "web_client_id": "com.example.web",
            "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
            "authorization_endpoint": "https://appleid.apple.com/auth/authorize",
            "token_endpoint": "http://127.0.0.1:\(tokenEndpoint.port)/other",
            "apple_team_id": "TEAM123456", "apple_key_id": "KEY1234567", "apple_private_key_file": keyFile.path,
        ]
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let server = try await SocialFixtures.server(fake, extra: [apple])
        try await server.withRouter { client in
            let walk = WebWalk(client: client, fake: fake)
            let pkce = WebWalk.pkce()
            let started = try await walk.start("apple", challenge: pkce.challenge, state: "s-apple")
            #expect(started.status == .found)
            let asked = WebWalk.query(started.providerURL)
            #expect(asked["response_mode"] == "form_post" && asked["client_id"] == "com.example.web" && asked["code_challenge"] == nil)
            #expect(asked["scope"] == "name email")
            let nonce = try #require(asked["nonce"])
            let state = try #require(asked["state"])
            idToken.withLock {
                $0 =
                    (try? issuer.token(
                        issuer.claims(
                            subject: "001234.apple", audience: "com.example.web", nonce: Secrets.sha256Hex(nonce),
                            email: "x7k2@privaterelay.appleid.com", emailVerified: true, now: server.clock.now()))) ?? ""
            }
            // Apple posts cross-site; the browser's cookie is not sent with that POST.
            let user = #"{"name":{"firstName":"Grace","lastName":"Hopper"},"email":"x7k2@privaterelay.appleid.com"}"#
            let posted = try await client.form("/v1/social/apple/callback", ["code": "apple-code-1", "state": state, "user": user])
            #expect(posted.status == .seeOther, "\(posted.text)")
            let onward = try #require(posted.headers[.location])
            #expect(onward.hasPrefix("/v1/social/apple/callback?"))
            #expect(!onward.contains("Grace") && !onward.contains("privaterelay"), "personal data stays out of the URL: \(onward)")
            let landed = try await walk.callback(URL(string: "http://127.0.0.1" + onward)!, cookie: started.cookie)
            let back = WebWalk.query(try #require(landed.headers[.location].flatMap(URL.init(string:))))
            #expect(back["state"] == "s-apple")
            let tokens = try await walk.exchange(code: try #require(back["code"], "\(back)"), verifier: pkce.verifier)
            #expect(tokens.object["is_new"] as? Bool == true, "\(tokens.text)")
            let access = try #require(tokens.string("access_token"))
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect(me.string("email") == "x7k2@privaterelay.appleid.com" && me.object["email_verified"] as? Bool == true)
            let profile = me.object["profile"] as? [String: Any] ?? [:]
            #expect(profile["given_name"] as? String == "Grace" && profile["family_name"] as? String == "Hopper", "\(me.text)")

            // What Apple's token endpoint received: the code, and a client secret it can verify.
            let exchange = try #require(await tokenEndpoint.requests(to: "/other").first)
            let form = Dictionary(
                exchange.text.split(separator: "&").map { pair -> (String, String) in
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                }
            ) { $1 }
            #expect(form["code"] == "apple-code-1" && form["client_id"] == "com.example.web" && form["code_verifier"] == nil)
            #expect(form["redirect_uri"] == "http://127.0.0.1:8080/v1/social/apple/callback")
            let secret = try #require(form["client_secret"]).split(separator: ".").map(String.init)
            #expect(secret.count == 3)
            let header = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(secret[0])))) as? [String: Any] ?? [:]
            #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY1234567")
            let claims = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(secret[1])))) as? [String: Any] ?? [:]
            #expect(
                claims["iss"] as? String == "TEAM123456" && claims["sub"] as? String == "com.example.web"
                    && claims["aud"] as? String == issuer.issuer)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(secret[2])))
            #expect(teamKey.publicKey.isValidSignature(signature, for: Data((secret[0] + "." + secret[1]).utf8)))
        }
        await jwks.stop()
        await tokenEndpoint.stop()
    }
}
