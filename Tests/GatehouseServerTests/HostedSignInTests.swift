import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The hosted sign-in through the router, request by request: what a client library and a browser
/// would send, and what an attacker would change.
@Suite("Hosted sign-in (OpenID Connect authorization endpoint)")
struct HostedSignInTests {
    @Test(
        "HS-1: authorization requests that cannot be trusted get a page and never a redirect (unknown client, unregistered or look-alike redirect_uri, none at all, a repeated parameter, a request_uri this server did not issue); the others are answered at the redirect URI with the OAuth error, the state and iss (no PKCE from a public client, plain PKCE, response_type token, no openid scope, an unknown prompt, prompt=none without a session, unreadable or unverifiable request objects, a foreign id_token_hint, a malformed claims parameter, an unknown response_mode)"
    )
    func refusals() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            for (uri, why) in [
                (Hosted.request("nobody", challenge: pkce.challenge), "unknown client"),
                (Hosted.request(redirect: "https://evil.example/cb", challenge: pkce.challenge), "foreign redirect"),
                (Hosted.request(redirect: Hosted.spa + "/", challenge: pkce.challenge), "trailing slash"),
                (Hosted.request(redirect: Hosted.spa + "?x=1", challenge: pkce.challenge), "added query"),
                (Hosted.request(redirect: "https://app.example.com:444/cb", challenge: pkce.challenge), "other port"),
                (Hosted.request(redirect: "https://APP.example.com/cb", challenge: pkce.challenge), "other case"),
                (
                    authorizeURI([("response_type", "code"), ("client_id", "spa"), ("scope", "openid"), ("code_challenge", pkce.challenge)]
                    ), "no redirect_uri"
                ),
                (Hosted.request(challenge: pkce.challenge) + "&client_id=spa", "repeated client_id"),
            ] {
                let answer = try await jar.send(.get, uri)
                #expect(answer.status == .badRequest, "\(why): \(answer.status)")
                #expect(answer.headers[.location] == nil, "\(why) was redirected")
                #expect(answer.headers[.contentType]?.hasPrefix("text/html") == true, "\(why)")
                #expect(answer.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            }
            let state = "a+b/c=d e&f%"
            for (extra, challenge, expected) in [
                ([(String, String)](), nil as String?, "invalid_request"),
                ([("code_challenge", pkce.challenge), ("code_challenge_method", "plain")], nil, "invalid_request"),
                ([("prompt", "sometimes")], pkce.challenge, "invalid_request"),
                ([("prompt", "none")], pkce.challenge, "login_required"),
                ([("request", "eyJ.e30.")], pkce.challenge, "invalid_request_object"),
                // A signed request object from a client that registered no keys: refused, not read unverified.
                (
                    [("request", Hosted.jwt(header: #"{"alg":"RS256"}"#, claims: #"{"state":"other"}"#) + "c2ln")], pkce.challenge,
                    "invalid_request_object"
                ),
                ([("id_token_hint", "not.a.token")], pkce.challenge, "invalid_request"),
                ([("claims", #"{"userinfo":"name"}"#)], pkce.challenge, "invalid_request"),
                ([("max_age", "-1")], pkce.challenge, "invalid_request"),
            ] {
                let answer = try await jar.send(.get, Hosted.request(challenge: challenge, state: state, extra: extra))
                #expect(answer.status == .seeOther, "\(extra): \(answer.text)")
                #expect(answer.headers[.location]?.hasPrefix(Hosted.spa + "?") == true)
                let query = HostedJar.query(answer)
                #expect(query["error"] == expected, "\(extra): \(query)")
                #expect(query["state"] == state, "state must come back exactly: \(query)")
                #expect(query["iss"] == Hosted.issuer)
            }
            // A request_uri this server did not issue (PAR's are urn:ietf:params:oauth:request_uri:…): nothing
            // vouches for a redirect, so a page.
            let foreignURI = try await jar.send(
                .get, Hosted.request(challenge: pkce.challenge, extra: [("request_uri", "https://app.example/request.jwt")]))
            #expect(foreignURI.status == .badRequest && foreignURI.headers[.location] == nil)
            // response_type=token replaced the code: duplicate keys are refused, so send it alone.
            let implicit = try await jar.send(
                .get,
                authorizeURI([
                    ("response_type", "token"), ("client_id", "spa"), ("redirect_uri", Hosted.spa), ("scope", "openid"), ("state", "s"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ]))
            #expect(HostedJar.query(implicit)["error"] == "unsupported_response_type")
            let noOpenID = try await jar.send(
                .get,
                authorizeURI([
                    ("response_type", "code"), ("client_id", "spa"), ("redirect_uri", Hosted.spa), ("scope", "email"), ("state", "s"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ]))
            #expect(HostedJar.query(noOpenID)["error"] == "invalid_scope")
            let mode = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("response_mode", "fragment")]))
            #expect(HostedJar.query(mode)["error"] == "invalid_request")
            // A POST is answered with the same request as a GET (the browser's SameSite=Lax cookies come with that).
            let posted = try await jar.send(.post, "/oauth/authorize", form: [("scope", "openid"), ("client_id", "spa")])
            #expect(posted.status == .seeOther && posted.headers[.location] == "/oauth/authorize?client_id=spa&scope=openid")
        }
    }

    @Test(
        "HS-2: the code flow by hand: the sign-in page's security headers (CSP with the client's origin as the only other form target, no framing, no-store, no referrer); a form without its CSRF token, with another browser's token or from another browser is refused; a wrong password shows the page again with 401; the right one answers the client with a code, the exact state and iss; the exchange needs the verifier; the ID token carries nonce, acr 1, auth_time, sid and a correct at_hash; a replayed code is refused and the session the first use started is ended"
    )
    func codeFlow() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let state = "s+/=  &%x"
            let page = try await jar.open(Hosted.request(challenge: pkce.challenge, state: state))
            #expect(page.status == .ok)
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(
                csp.contains("form-action 'self' https://app.example.com;") && csp.contains("frame-ancestors 'none'")
                    && !csp.contains("script-src"), "\(csp)")
            #expect(page.headers[.cacheControl] == "no-store" && page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.text.contains("<html lang=\"en\">") && page.text.contains("<label for=\"password\">"))
            let action = try #require(HostedJar.action(page, form: "signin"))
            let csrf = try #require(HostedJar.csrf(page))

            // CSRF: no token, a made-up token, and the right token from a browser without the flow's cookie.
            for token in [nil, "forged"] {
                let refused = try await jar.send(
                    .post, action, form: (token.map { [("csrf", $0)] } ?? []) + [("email", user.email), ("password", user.password)])
                #expect(refused.status == .forbidden, "csrf \(token ?? "missing")")
                #expect(refused.headers[.location] == nil)
            }
            let stranger = HostedJar(client)
            let foreign = try await stranger.send(
                .post, action, form: [("csrf", csrf), ("email", user.email), ("password", user.password)])
            #expect(foreign.status == .forbidden)
            // Another browser with its own flow cookie cannot take this flow's page either.
            _ = try await stranger.send(.get, Hosted.request(challenge: pkce.challenge))
            let taken = try await stranger.send(
                .get, try #require(page.headers[.location] ?? action.components(separatedBy: "/password").first))
            #expect(taken.status == .forbidden, "\(taken.status)")

            let wrong = try await jar.submit(action, [("email", user.email), ("password", "not the password")], csrf: csrf)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("id=\"error\""), "\(wrong.text)")
            let answer = try await jar.submit(action, [("email", user.email), ("password", user.password)], csrf: HostedJar.csrf(wrong))
            #expect(answer.status == .seeOther, "\(answer.text)")
            #expect(jar.cookies["gh_session"]?.hasPrefix("gh_bs_") == true)
            let query = HostedJar.query(answer)
            #expect(query["state"] == state && query["iss"] == Hosted.issuer, "\(query)")
            let code = try #require(query["code"])

            let noVerifier = try await Hosted.exchange(client, code: code, verifier: nil)
            #expect(noVerifier.status == .badRequest)
            // The refused attempt spent the code (codes are single use even when the exchange fails).
            let pkce2 = pkcePair()
            let again = try await jar.open(Hosted.request(challenge: pkce2.challenge, state: "second"))
            #expect(again.status == .seeOther, "the browser is signed in: \(again.text)")
            let code2 = try #require(HostedJar.query(again)["code"])
            let tokens = try await Hosted.exchange(client, code: code2, verifier: pkce2.verifier)
            #expect(tokens.status == .ok, "\(tokens.text)")
            let access = try #require(tokens.string("access_token"))
            let id = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(id["nonce"] as? String == "n-1" && id["acr"] as? String == "0" && id["aud"] as? String == "spa", "\(id)")
            #expect(id["at_hash"] as? String == Base64URL.encode(Data(SHA256.hash(data: Data(access.utf8))).prefix(16)))
            #expect(id["auth_time"] as? Int != nil && id["sid"] as? String != nil && id["email"] as? String == user.email.lowercased())

            // Replay: refused, and the session the first exchange started ends with it.
            let replay = try await Hosted.exchange(client, code: code2, verifier: pkce2.verifier)
            #expect(replay.status == .badRequest && replay.string("error") == "invalid_grant")
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect(me.status == .unauthorized, "the replayed code's session must end: \(me.status)")
            let refreshed = try await refresh(client, try #require(tokens.string("refresh_token")), clientID: "spa")
            #expect(refreshed.status == .badRequest && refreshed.string("error") == "invalid_grant")
        }
    }

    @Test(
        "HS-7: pages speak the reader's language: Accept-Language nb gives Norwegian, ui_locales overrides the header, an unknown language falls back to English; the client's name and colour brand the page and its text is escaped"
    )
    func languagesAndBranding() async throws {
        let server = try await TestServer.start(.sqlite)
        _ = try await server.createClient(
            id: "brand", redirectURIs: [Hosted.spa], settings: ["brand_color=#aa3300", "logo_url=https://cdn.example.com/logo.png"])
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
            id: "brand", settings: [], name: "Tom & <Jerry>")
        try await server.withRouter { client in
            let pkce = pkcePair()
            let uri = Hosted.request("brand", challenge: pkce.challenge)
            let jar = HostedJar(client)
            jar.acceptLanguage = "nb-NO,nb;q=0.9,en;q=0.5"
            let norwegian = try await jar.open(uri)
            #expect(norwegian.text.contains("<html lang=\"nb\">") && norwegian.text.contains("Logg inn"), "\(norwegian.text)")
            jar.acceptLanguage = "en"
            let override = try await jar.open(Hosted.request("brand", challenge: pkce.challenge, extra: [("ui_locales", "nb en")]))
            #expect(override.text.contains("<html lang=\"nb\">"))
            jar.acceptLanguage = "fr"
            let english = try await jar.open(uri)
            #expect(english.text.contains("<html lang=\"en\">") && english.text.contains("Sign in"))
            #expect(english.text.contains("#aa3300") && english.text.contains("https://cdn.example.com/logo.png"))
            #expect(
                english.text.contains("Tom &amp; &lt;Jerry&gt;") && !english.text.contains("<Jerry>") && !english.text.contains("&amp;amp;")
            )
        }
        await server.stop()
    }

    @Test(
        "HS-8: a verification link of a client whose terms and required fields the user lacks goes through the terms page and the required-fields page, then returns to the app with its code, which the app redeems with its verifier"
    )
    func verificationContinues() async throws {
        let server = try await TestServer.start(.sqlite)
        _ = try await server.createClient(
            id: "mobile", redirectURIs: ["com.example.app:/verified"],
            settings: ["terms_client_version=3", "terms_client_url=https://example.com/terms", "required_fields=given_name"])
        try await server.withRouter { client in
            let pkce = pkcePair()
            let email = "link-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let signup = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": email, "password": "a long enough password", "redirect_to": "com.example.app:/verified",
                    "code_challenge": pkce.challenge, "code_challenge_method": "S256",
                ])
            #expect(signup.status == .created, "\(signup.text)")
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: email, kind: "verification")?.linkPath("/verify?token="))
            let jar = HostedJar(client)
            let page = try await jar.open(path)
            let verified = try await jar.submit(
                "/verify", [("token", HostedJar.attribute(page.text, after: "name=\"token\" value=\"") ?? "")], csrf: HostedJar.csrf(page))
            #expect(verified.status == .ok && verified.text.contains("id=\"terms\""), "\(verified.status) \(verified.text)")
            let noTick = try await jar.submit(try #require(HostedJar.action(verified, form: "terms")), [], csrf: HostedJar.csrf(verified))
            #expect(noTick.status == .unprocessableContent && noTick.text.contains("id=\"error\""))
            let fields = try await jar.submit(
                try #require(HostedJar.action(verified, form: "terms")), [("accept", "yes")], csrf: HostedJar.csrf(verified))
            #expect(fields.text.contains("id=\"field-given_name\""), "\(fields.text)")
            let blank = try await jar.submit(
                try #require(HostedJar.action(fields, form: "fields")), [("given_name", "  ")], csrf: HostedJar.csrf(fields))
            #expect(blank.status == .unprocessableContent && blank.text.contains("field-given_name-error"))
            let done = try await jar.submit(
                try #require(HostedJar.action(fields, form: "fields")), [("given_name", "Grace")], csrf: HostedJar.csrf(fields))
            #expect(
                done.status == .seeOther && done.headers[.location]?.hasPrefix("com.example.app:/verified?code=") == true, "\(done.headers)"
            )
            let tokens = try await Hosted.exchange(
                client, code: try #require(HostedJar.query(done)["code"]), verifier: pkce.verifier, id: "mobile",
                redirect: "com.example.app:/verified")
            #expect(tokens.status == .ok, "\(tokens.text)")
            let user = try #require(tokens.object["user"] as? [String: Any])
            #expect(
                user["agreements_up_to_date"] as? Bool == true && (user["missing_required_fields"] as? [String])?.isEmpty == true, "\(user)"
            )
        }
    }

    @Test(
        "HS-10: the hosted sign-up page creates the account and signs the browser in when the client needs no verification (then the client gets its code); with verification it says to check the mail; the recovery page sends the mail and says so; unknown flows, actions and bodies get 4xx pages"
    )
    func signUpRecoveryAndBadInput() async throws {
        let (server, _) = try await Hosted.start()
        _ = try await server.createClient(id: "verified", redirectURIs: [Hosted.spa])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let page = try await jar.open(Hosted.request(challenge: pkce.challenge))
            let signupPath = try #require(HostedJar.attribute(page.text, after: "id=\"signup-link\" href=\""))
            let signupPage = try await jar.open(signupPath)
            #expect(signupPage.text.contains("id=\"signup\""))
            let email = "page-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let short = try await jar.submit(
                try #require(HostedJar.action(signupPage, form: "signup")), [("email", email), ("password", "short")],
                csrf: HostedJar.csrf(signupPage))
            #expect(short.status == .unprocessableContent && short.text.contains("id=\"error\""))
            let created = try await jar.submit(
                try #require(HostedJar.action(signupPage, form: "signup")), [("email", email), ("password", "a page chosen passphrase")],
                csrf: HostedJar.csrf(signupPage))
            #expect(created.status == .seeOther && HostedJar.query(created)["code"] != nil, "\(created.text)")
            let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(created)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok)

            let other = HostedJar(client)
            let verifiedPage = try await other.open(Hosted.request("verified", challenge: pkcePair().challenge))
            let signup2 = try await other.open(try #require(HostedJar.attribute(verifiedPage.text, after: "id=\"signup-link\" href=\"")))
            let pending = try await other.submit(
                try #require(HostedJar.action(signup2, form: "signup")),
                [("email", "pending-" + email), ("password", "a page chosen passphrase")],
                csrf: HostedJar.csrf(signup2))
            #expect(pending.status == .ok && pending.text.contains("pending-" + email), "\(pending.text)")
            #expect(other.cookies["gh_session"] == nil)

            let recoveryPage = try await other.open(
                try #require(HostedJar.attribute(verifiedPage.text, after: "id=\"recovery-link\" href=\"")))
            let sent = try await other.submit(
                try #require(HostedJar.action(recoveryPage, form: "recovery")), [("email", email)], csrf: HostedJar.csrf(recoveryPage))
            #expect(sent.status == .ok && sent.text.contains(email))
            try await server.deliverMail()
            #expect(server.lastMail(to: email, kind: "recovery") != nil)

            for (method, uri) in [
                (HTTPRequest.Method.get, "/authorize/not-a-uuid"), (.get, "/authorize/\(UUID())"), (.post, "/authorize/\(UUID())/password"),
                (.get, "/oauth/authorize?%zz"), (.get, "/oauth/logout?id_token_hint=%%"), (.get, "/web-session"),
                (.get, "/web-session?token=gh_ws_nope"),
            ] {
                let answer = try await jar.send(method, uri)
                #expect((400..<500).contains(answer.status.code), "\(method) \(uri): \(answer.status)")
            }
            let flowAction = try #require(HostedJar.action(page, form: "signin")).replacingOccurrences(of: "/password", with: "/teleport")
            #expect((400..<500).contains(try await jar.send(.post, flowAction, form: [("csrf", HostedJar.csrf(page) ?? "")]).status.code))
            let json = try await client.json(.post, "/oauth/authorize", ["client_id": "spa"])
            #expect(json.status == .unsupportedMediaType)
        }
    }

    @Test(
        "HS-11: a client that offers one-time codes shows the code form on the sign-in page; the code goes by mail, a wrong one shows the code page again with 401, the right one signs the browser in (an unknown address gets an account) and the client gets its code"
    )
    func oneTimeCode() async throws {
        let (server, _) = try await Hosted.start(["methods=password,email_otp"])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let page = try await jar.open(Hosted.request(challenge: pkce.challenge))
            let action = try #require(HostedJar.action(page, form: "otp"), "\(page.text)")
            let email = "code-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let codePage = try await jar.submit(action, [("identifier", email)], csrf: HostedJar.csrf(page))
            #expect(
                codePage.status == .ok && codePage.text.contains("id=\"otp-verify\"") && codePage.text.contains(email), "\(codePage.text)")
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: email, kind: "otp")?.code)
            let verify = try #require(HostedJar.action(codePage, form: "otp-verify"))
            let wrong = try await jar.submit(
                verify, [("identifier", email), ("code", code == "000000" ? "111111" : "000000")], csrf: HostedJar.csrf(codePage))
            #expect(wrong.status == .unauthorized && wrong.text.contains("id=\"otp-verify\"") && wrong.text.contains("id=\"error\""))
            let answer = try await jar.submit(verify, [("identifier", email), ("code", code)], csrf: HostedJar.csrf(wrong))
            #expect(answer.status == .seeOther, "\(answer.text)")
            #expect(jar.cookies["gh_session"] != nil)
            let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok)
            let id = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(id["email"] as? String == email && id["amr"] as? [String] == ["otp"] && id["email_verified"] as? Bool == true, "\(id)")
        }
    }

    @Test(
        "HS-12: the client's social providers are buttons on the sign-in page; one leads through the provider (Gatehouse's own state, cookie and PKCE) and back into the flow, which signs the browser in and answers the client with a code; a cancel at the provider comes back to the sign-in page with an error, and the flow goes on"
    )
    func providerButtons() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let server = try await SocialFixtures.server(fake)
        _ = try await server.createClient(
            id: "spa", redirectURIs: [Hosted.spa], settings: ["email_verification=off", "social_providers=github,x"])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let walk = WebWalk(client: client, fake: fake)
            let pkce = pkcePair()
            let page = try await jar.open(Hosted.request(challenge: pkce.challenge))
            #expect(
                page.text.contains("id=\"social-github\"") && page.text.contains("GitHub") && page.text.contains("id=\"social-x\""),
                "\(page.text)")
            let button = try #require(HostedJar.attribute(page.text, after: "id=\"social-github\" href=\""))

            func viaProvider(deny: Bool) async throws -> TestResponse {
                let toProvider = try await jar.send(.get, button)
                #expect(toProvider.status == .found, "\(toProvider.text)")
                let started = WebWalk.Started(
                    providerURL: try #require(toProvider.headers[.location].flatMap(URL.init(string:))), cookie: nil,
                    status: toProvider.status,
                    text: "")
                let back = try await walk.approve(started, user: "octo", deny: deny)
                return try await jar.send(.get, back.path + (back.query.map { "?" + $0 } ?? ""))
            }
            let cancelled = try await viaProvider(deny: true)
            #expect(cancelled.status == .found && cancelled.headers[.location]?.hasPrefix("/authorize/") == true, "\(cancelled.headers)")
            let shown = try await jar.open(try #require(cancelled.headers[.location]))
            #expect(shown.status == .unauthorized && shown.text.contains("id=\"error\"") && shown.text.contains("id=\"signin\""))

            let landed = try await viaProvider(deny: false)
            #expect(
                landed.status == .seeOther && landed.headers[.location]?.hasPrefix(Hosted.spa + "?") == true,
                "\(landed.status) \(landed.text)")
            #expect(jar.cookies["gh_session"] != nil)
            let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(landed)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok, "\(tokens.text)")
            #expect(try decodeClaims(try #require(tokens.string("id_token")))["amr"] as? [String] == ["fed"])
            // The browser is signed in now: the next authorization needs no provider.
            let again = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(again)["code"] != nil)
        }
    }

}
