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
    static let spa = "https://app.example.com/cb"
    static let partnerRedirect = "https://partner.example.com/cb"
    static let issuer = "http://127.0.0.1:8080"

    /// A server with a first-party public client (`spa`) and a third-party confidential one (`partner`).
    static func start(_ spaSettings: [String] = []) async throws -> (TestServer, String) {
        let server = try await TestServer.start(.sqlite)
        _ = try await server.createClient(
            id: "spa", redirectURIs: [spa, "com.example.app:/cb"],
            settings: ["email_verification=off", "post_logout_redirect_uris=https://app.example.com/bye"] + spaSettings)
        let partner = try await server.createClient(
            id: "partner", kind: .confidential, redirectURIs: [partnerRedirect], settings: ["email_verification=off", "third_party=on"])
        return (server, try #require(partner.secret))
    }

    static func request(_ client: String = "spa", redirect: String = spa, challenge: String?, state: String = "st", extra: [(String, String)] = [])
        -> String
    {
        authorizeURI(
            [("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", "openid profile email offline_access"),
             ("state", state), ("nonce", "n-1")]
                + (challenge.map { [("code_challenge", $0), ("code_challenge_method", "S256")] } ?? []) + extra)
    }

    /// Signs the jar's browser in through the sign-in page; returns the answer to the client.
    static func signIn(_ jar: HostedJar, _ uri: String, email: String, password: String) async throws -> TestResponse {
        let page = try await jar.open(uri)
        #expect(page.status == .ok, "\(page.text)")
        let action = try #require(HostedJar.action(page, form: "signin"), "\(page.text)")
        return try await jar.submit(action, [("email", email), ("password", password)], csrf: HostedJar.csrf(page))
    }

    static func exchange(_ client: some TestClientProtocol, code: String, verifier: String?, id: String = "spa", redirect: String = spa) async throws
        -> TestResponse
    {
        var fields = ["grant_type": "authorization_code", "code": code, "client_id": id, "redirect_uri": redirect]
        if let verifier { fields["code_verifier"] = verifier }
        return try await client.form("/oauth/token", fields)
    }

    @Test("HS-1: authorization requests that cannot be trusted get a page and never a redirect (unknown client, unregistered or look-alike redirect_uri, none at all, a repeated parameter); the others are answered at the redirect URI with the OAuth error, the state and iss (no PKCE from a public client, plain PKCE, response_type token, no openid scope, an unknown prompt, prompt=none without a session, request objects, an unknown response_mode)")
    func refusals() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            for (uri, why) in [
                (Self.request("nobody", challenge: pkce.challenge), "unknown client"),
                (Self.request(redirect: "https://evil.example/cb", challenge: pkce.challenge), "foreign redirect"),
                (Self.request(redirect: Self.spa + "/", challenge: pkce.challenge), "trailing slash"),
                (Self.request(redirect: Self.spa + "?x=1", challenge: pkce.challenge), "added query"),
                (Self.request(redirect: "https://app.example.com:444/cb", challenge: pkce.challenge), "other port"),
                (Self.request(redirect: "https://APP.example.com/cb", challenge: pkce.challenge), "other case"),
                (authorizeURI([("response_type", "code"), ("client_id", "spa"), ("scope", "openid"), ("code_challenge", pkce.challenge)]), "no redirect_uri"),
                (Self.request(challenge: pkce.challenge) + "&client_id=spa", "repeated client_id"),
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
                ([("request", "eyJ.e30.")], pkce.challenge, "request_not_supported"),
                ([("max_age", "-1")], pkce.challenge, "invalid_request"),
            ] {
                let answer = try await jar.send(.get, Self.request(challenge: challenge, state: state, extra: extra))
                #expect(answer.status == .seeOther, "\(extra): \(answer.text)")
                #expect(answer.headers[.location]?.hasPrefix(Self.spa + "?") == true)
                let query = HostedJar.query(answer)
                #expect(query["error"] == expected, "\(extra): \(query)")
                #expect(query["state"] == state, "state must come back exactly: \(query)")
                #expect(query["iss"] == Self.issuer)
            }
            // response_type=token replaced the code: duplicate keys are refused, so send it alone.
            let implicit = try await jar.send(
                .get,
                authorizeURI([
                    ("response_type", "token"), ("client_id", "spa"), ("redirect_uri", Self.spa), ("scope", "openid"), ("state", "s"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ]))
            #expect(HostedJar.query(implicit)["error"] == "unsupported_response_type")
            let noOpenID = try await jar.send(
                .get,
                authorizeURI([
                    ("response_type", "code"), ("client_id", "spa"), ("redirect_uri", Self.spa), ("scope", "email"), ("state", "s"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ]))
            #expect(HostedJar.query(noOpenID)["error"] == "invalid_scope")
            let mode = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("response_mode", "fragment")]))
            #expect(HostedJar.query(mode)["error"] == "invalid_request")
            // A POST is answered with the same request as a GET (the browser's SameSite=Lax cookies come with that).
            let posted = try await jar.send(.post, "/oauth/authorize", form: [("scope", "openid"), ("client_id", "spa")])
            #expect(posted.status == .seeOther && posted.headers[.location] == "/oauth/authorize?client_id=spa&scope=openid")
        }
    }

    @Test("HS-2: the code flow by hand: the sign-in page's security headers (CSP with the client's origin as the only other form target, no framing, no-store, no referrer); a form without its CSRF token, with another browser's token or from another browser is refused; a wrong password shows the page again with 401; the right one answers the client with a code, the exact state and iss; the exchange needs the verifier; the ID token carries nonce, acr 1, auth_time, sid and a correct at_hash; a replayed code is refused and the session the first use started is ended")
    func codeFlow() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let state = "s+/=  &%x"
            let page = try await jar.open(Self.request(challenge: pkce.challenge, state: state))
            #expect(page.status == .ok)
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(csp.contains("form-action 'self' https://app.example.com;") && csp.contains("frame-ancestors 'none'") && !csp.contains("script-src"), "\(csp)")
            #expect(page.headers[.cacheControl] == "no-store" && page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.text.contains("<html lang=\"en\">") && page.text.contains("<label for=\"password\">"))
            let action = try #require(HostedJar.action(page, form: "signin"))
            let csrf = try #require(HostedJar.csrf(page))

            // CSRF: no token, a made-up token, and the right token from a browser without the flow's cookie.
            for token in [nil, "forged"] {
                let refused = try await jar.send(.post, action, form: (token.map { [("csrf", $0)] } ?? []) + [("email", user.email), ("password", user.password)])
                #expect(refused.status == .forbidden, "csrf \(token ?? "missing")")
                #expect(refused.headers[.location] == nil)
            }
            let stranger = HostedJar(client)
            let foreign = try await stranger.send(.post, action, form: [("csrf", csrf), ("email", user.email), ("password", user.password)])
            #expect(foreign.status == .forbidden)
            // Another browser with its own flow cookie cannot take this flow's page either.
            _ = try await stranger.send(.get, Self.request(challenge: pkce.challenge))
            let taken = try await stranger.send(.get, try #require(page.headers[.location] ?? action.components(separatedBy: "/password").first))
            #expect(taken.status == .forbidden, "\(taken.status)")

            let wrong = try await jar.submit(action, [("email", user.email), ("password", "not the password")], csrf: csrf)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("id=\"error\""), "\(wrong.text)")
            let answer = try await jar.submit(action, [("email", user.email), ("password", user.password)], csrf: HostedJar.csrf(wrong))
            #expect(answer.status == .seeOther, "\(answer.text)")
            #expect(jar.cookies["gh_session"]?.hasPrefix("gh_bs_") == true)
            let query = HostedJar.query(answer)
            #expect(query["state"] == state && query["iss"] == Self.issuer, "\(query)")
            let code = try #require(query["code"])

            let noVerifier = try await Self.exchange(client, code: code, verifier: nil)
            #expect(noVerifier.status == .badRequest)
            // The refused attempt spent the code (codes are single use even when the exchange fails).
            let pkce2 = pkcePair()
            let again = try await jar.open(Self.request(challenge: pkce2.challenge, state: "second"))
            #expect(again.status == .seeOther, "the browser is signed in: \(again.text)")
            let code2 = try #require(HostedJar.query(again)["code"])
            let tokens = try await Self.exchange(client, code: code2, verifier: pkce2.verifier)
            #expect(tokens.status == .ok, "\(tokens.text)")
            let access = try #require(tokens.string("access_token"))
            let id = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(id["nonce"] as? String == "n-1" && id["acr"] as? String == "0" && id["aud"] as? String == "spa", "\(id)")
            #expect(id["at_hash"] as? String == Base64URL.encode(Data(SHA256.hash(data: Data(access.utf8))).prefix(16)))
            #expect(id["auth_time"] as? Int != nil && id["sid"] as? String != nil && id["email"] as? String == user.email.lowercased())

            // Replay: refused, and the session the first exchange started ends with it.
            let replay = try await Self.exchange(client, code: code2, verifier: pkce2.verifier)
            #expect(replay.status == .badRequest && replay.string("error") == "invalid_grant")
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect(me.status == .unauthorized, "the replayed code's session must end: \(me.status)")
            let refreshed = try await refresh(client, try #require(tokens.string("refresh_token")), clientID: "spa")
            #expect(refreshed.status == .badRequest && refreshed.string("error") == "invalid_grant")
        }
    }

    @Test("HS-3: single sign-on: a signed-in browser gets a code at once (acr 0, the first sign-in's auth_time), also with prompt=none; prompt=login and max_age=0 show the sign-in page; select_account offers to continue as the user; form_post answers with a self-posting form whose only script is allowed by its hash and whose only other form target is the client")
    func singleSignOn() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let first = try await Self.signIn(jar, Self.request(challenge: pkce.challenge), email: user.email, password: user.password)
            let firstTokens = try await Self.exchange(client, code: try #require(HostedJar.query(first)["code"]), verifier: pkce.verifier)
            let firstID = try decodeClaims(try #require(firstTokens.string("id_token")))
            #expect(firstID["acr"] as? String == "1")
            server.clock.advance(by: 30)

            for extra in [[], [("prompt", "none")]] {
                let next = pkcePair()
                let answer = try await jar.send(.get, Self.request(challenge: next.challenge, extra: extra))
                #expect(answer.status == .seeOther, "\(extra): \(answer.text)")
                let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: next.verifier)
                let id = try decodeClaims(try #require(tokens.string("id_token")))
                #expect(id["acr"] as? String == "0" && id["auth_time"] as? Int == firstID["auth_time"] as? Int, "\(id)")
                // Refreshed ID tokens keep the sign-in's auth_time.
                let refreshed = try await refresh(client, try #require(tokens.string("refresh_token")), clientID: "spa")
                #expect(try decodeClaims(try #require(refreshed.string("id_token")))["auth_time"] as? Int == firstID["auth_time"] as? Int)
            }
            for extra in [[("prompt", "login")], [("max_age", "0")], [("max_age", "10")]] {
                let page = try await jar.open(Self.request(challenge: pkce.challenge, extra: extra))
                #expect(page.status == .ok && page.text.contains("id=\"signin\""), "\(extra)")
                #expect(!page.text.contains("id=\"continue\""), "\(extra) must not offer the old session")
            }
            let fresh = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("max_age", "3600")]))
            #expect(fresh.status == .seeOther, "max_age larger than the session's age needs no sign-in")
            let chooser = try await jar.open(Self.request(challenge: pkce.challenge, extra: [("prompt", "select_account")]))
            #expect(chooser.text.contains("id=\"continue\"") && chooser.text.contains(user.email.lowercased()))
            let continued = try await jar.submit(try #require(HostedJar.action(chooser, form: "continue")), [], csrf: HostedJar.csrf(chooser))
            #expect(continued.status == .seeOther && HostedJar.query(continued)["code"] != nil)

            let posted = try await jar.send(.get, Self.request(challenge: pkce.challenge, state: "fp<\"'>", extra: [("response_mode", "form_post")]))
            #expect(posted.status == .ok)
            let csp = try #require(posted.headers[.contentSecurityPolicy])
            let hash = "sha256-" + Data(SHA256.hash(data: Data("document.forms[0].submit()".utf8))).base64EncodedString()
            #expect(csp.contains("script-src '\(hash)'") && csp.contains("form-action 'self' https://app.example.com"), "\(csp)")
            #expect(posted.text.contains("action=\"https://app.example.com/cb\"") && posted.text.contains("name=\"code\""))
            #expect(posted.text.contains("value=\"fp&lt;&quot;&#39;&gt;\"") || posted.text.contains("value=\"fp&lt;&quot;&#x27;&gt;\""), "the state is escaped: \(posted.text)")
        }
    }

    @Test("HS-4: RP-initiated logout: an unregistered or foreign post_logout_redirect_uri, or one without a known client, is a page and never a redirect; without an id_token_hint the user is asked first (a link alone signs no one out) and the confirmation needs its CSRF token; with the hint of this browser's user, logout ends the browser session and every app session it signed in, clears the cookie and returns to the registered URI with the state")
    func rpLogout() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let answer = try await Self.signIn(jar, Self.request(challenge: pkce.challenge), email: user.email, password: user.password)
            let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
            let idToken = try #require(tokens.string("id_token"))
            let access = try #require(tokens.string("access_token"))
            for query in [
                [("id_token_hint", idToken), ("post_logout_redirect_uri", "https://evil.example/bye")],
                [("id_token_hint", idToken), ("post_logout_redirect_uri", "https://app.example.com/bye/")],
                [("post_logout_redirect_uri", "https://app.example.com/bye")],
                [("id_token_hint", idToken), ("client_id", "partner"), ("post_logout_redirect_uri", "https://app.example.com/bye")],
                [("id_token_hint", "eyJhbGciOiJub25lIn0.e30."), ("post_logout_redirect_uri", "https://app.example.com/bye")],
            ] {
                let refused = try await jar.send(.get, "/oauth/logout?" + FormEncoding.encode(query))
                #expect(refused.status == .badRequest && refused.headers[.location] == nil, "\(query.map(\.0))")
            }
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .ok)

            // A relying party's POST becomes the same request as a GET, which brings the session cookie.
            let posted = try await jar.send(.post, "/oauth/logout", form: [("client_id", "spa"), ("state", "p")])
            #expect(posted.status == .seeOther && posted.headers[.location] == "/oauth/logout?client_id=spa&state=p")
            let confirm = try await jar.send(.get, "/oauth/logout?" + FormEncoding.encode([("client_id", "spa"), ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "b y+e")]))
            #expect(confirm.status == .ok && confirm.text.contains("id=\"logout\""), "\(confirm.text)")
            let noToken = try await jar.send(.post, "/oauth/logout", form: [("confirm", "yes"), ("client_id", "spa")])
            #expect(noToken.status == .forbidden)
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .ok, "nothing ended yet")

            let ended = try await jar.send(
                .get, "/oauth/logout?" + FormEncoding.encode([("id_token_hint", idToken), ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "b y+e")]))
            #expect(ended.status == .seeOther)
            #expect(ended.headers[.location] == "https://app.example.com/bye?state=b%20y%2Be")
            #expect(jar.cookies["gh_session"] == nil)
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .unauthorized)
            let prompt = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(prompt)["error"] == "login_required")
        }
    }

    @Test("HS-5: from the app into the web: POST /v1/web-session gives a one-time URL that signs a browser in as the app's user and lands on the path asked for; used twice it is a page that says so; the browser's session keeps the app's sign-in time (auth_time, max_age); a browser signed in as someone else is not switched (409 page); a third-party client's token gets none; redirect_to outside this server, the client's redirect URIs and its origins is refused (//host, backslashes, other hosts, javascript:); then the browser's authorization needs no password")
    func webSession() async throws {
        let (server, _) = try await Self.start(["allowed_origins=https://app.example.com"])
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            #expect(try await client.json(.post, "/v1/web-session", [:]).status == .unauthorized)
            for target in ["//evil.example/x", "/\\evil.example", "https://evil.example/account", "javascript:alert(1)", "https://app.example.com.evil.example/", "/a b"] {
                let refused = try await client.json(.post, "/v1/web-session", ["redirect_to": target], bearer: user.accessToken)
                #expect(refused.status == .unprocessableContent, "\(target): \(refused.text)")
            }
            for target in ["https://app.example.com/account?tab=1", Self.spa] {
                let allowed = try await client.json(.post, "/v1/web-session", ["redirect_to": target], bearer: user.accessToken)
                #expect(allowed.status == .created, "\(target): \(allowed.text)")
            }
            let created = try await client.json(.post, "/v1/web-session", ["redirect_to": "/account"], bearer: user.accessToken)
            #expect(created.status == .created && created.object["expires_in"] as? Int == 60)
            let link = try #require(created.string("url"))
            let url = try #require(URLComponents(string: link))
            #expect(url.path == "/web-session" && url.host == "127.0.0.1")
            let path = url.path + "?" + (url.percentEncodedQuery ?? "")
            let jar = HostedJar(client)
            let opened = try await jar.send(.get, path)
            #expect(opened.status == .seeOther && opened.headers[.location] == Self.issuer + "/account")
            #expect(jar.cookies["gh_session"] != nil)
            let reused = try await HostedJar(client).send(.get, path)
            #expect(reused.status == .gone && reused.headers[.location] == nil)
            let pkce = pkcePair()
            server.clock.advance(by: 120)
            let answer = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"], "\(answer.text)"), verifier: pkce.verifier)
            #expect(try decodeClaims(try #require(tokens.string("access_token")))["sub"] as? String == (try decodeClaims(user.accessToken))["sub"] as? String)
            // auth_time is the app's sign-in, not the moment the link was opened: max_age still means it.
            let idToken = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(idToken["auth_time"] as? Int == (try decodeClaims(user.accessToken))["iat"] as? Int, "\(idToken)")
            let tooOld = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none"), ("max_age", "60")]))
            #expect(HostedJar.query(tooOld)["error"] == "login_required")

            // A link of another person's app does not switch a signed-in browser.
            let other = try await signUp(client, clientID: "spa")
            let foreign = try await client.json(.post, "/v1/web-session", ["redirect_to": "/account"], bearer: other.accessToken)
            let foreignLink = try #require(foreign.string("url"))
            let foreignURL = try #require(URLComponents(string: foreignLink))
            let switched = try await jar.send(.get, foreignURL.path + "?" + (foreignURL.percentEncodedQuery ?? ""))
            #expect(switched.status == .conflict && switched.headers[.location] == nil)
            let still = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(still)["code"] != nil, "the browser keeps its own user")

            // A third-party client's token cannot become a browser session.
            let partnerUser = try await client.json(.post, "/v1/login", ["client_id": "partner", "email": other.email, "password": other.password])
            let partnerAccess = try #require(partnerUser.string("access_token"), "\(partnerUser.text)")
            let refused = try await client.json(.post, "/v1/web-session", [:], bearer: partnerAccess)
            #expect(refused.status == .forbidden, "\(refused.text)")
        }
    }

    @Test("HS-6: a third-party client asks consent once per user and scopes (prompt=none says consent_required before it; deny answers access_denied), the consent is listed at /v1/me/consents and in the user export, and revoking it ends the client's sessions and brings the page back; prompt=consent asks again; a consent page left open across a sign-out does not finish")
    func consent() async throws {
        let (server, secret) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let partner = { (extra: [(String, String)]) in
                Self.request("partner", redirect: Self.partnerRedirect, challenge: nil, extra: extra)
            }
            _ = try await Self.signIn(jar, Self.request(challenge: pkcePair().challenge), email: user.email, password: user.password)
            #expect(HostedJar.query(try await jar.send(.get, partner([("prompt", "none")])))["error"] == "consent_required")
            let page = try await jar.open(partner([]))
            #expect(page.text.contains("id=\"consent\"") && page.text.contains("partner"), "\(page.text)")
            let denied = try await jar.submit(try #require(HostedJar.action(page, form: "consent")), [("decision", "deny")], csrf: HostedJar.csrf(page))
            #expect(HostedJar.query(denied)["error"] == "access_denied")
            let again = try await jar.open(partner([]))
            let allowed = try await jar.submit(try #require(HostedJar.action(again, form: "consent")), [("decision", "allow")], csrf: HostedJar.csrf(again))
            let code = try #require(HostedJar.query(allowed)["code"], "\(allowed.text)")
            let tokens = try await client.form(
                "/oauth/token", ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.partnerRedirect], basic: ("partner", secret))
            #expect(tokens.status == .ok, "\(tokens.text)")
            let partnerAccess = try #require(tokens.string("access_token"))
            #expect(try await jar.send(.get, partner([])).status == .seeOther, "consent is remembered")
            let asked = try await jar.open(partner([("prompt", "consent")]))
            #expect(asked.text.contains("id=\"consent\""))
            // Left on its consent page while the browser signs out: it does not finish for whoever comes next.
            let loggedOut = try await jar.send(.get, "/oauth/logout?client_id=spa")
            _ = try await jar.send(.post, "/oauth/logout", form: [("csrf", HostedJar.csrf(loggedOut) ?? ""), ("confirm", "yes"), ("client_id", "spa")])
            #expect(jar.cookies["gh_session"] == nil)
            let stale = try await jar.submit(try #require(HostedJar.action(asked, form: "consent")), [("decision", "allow")], csrf: HostedJar.csrf(asked))
            #expect(stale.status == .gone && stale.headers[.location] == nil, "\(stale.status)")
            _ = try await Self.signIn(jar, Self.request(challenge: pkcePair().challenge), email: user.email, password: user.password)

            let list = try await client.json(.get, "/v1/me/consents", bearer: user.accessToken)
            let consents = try #require(list.object["consents"] as? [[String: Any]])
            #expect(consents.count == 1 && consents[0]["client_id"] as? String == "partner" && consents[0]["client_name"] as? String == "partner")
            // The user export keeps it too.
            let admin = try await adminToken(server, client, id: "ops", scopes: ["admin"])
            let userID = try #require((try decodeClaims(user.accessToken))["sub"] as? String)
            let export = try await client.json(.get, "/admin/v1/users/\(userID)/export", bearer: admin)
            #expect((export.object["consents"] as? [[String: Any]])?.first?["client_id"] as? String == "partner", "\(export.text.prefix(300))")
            #expect(try await client.json(.delete, "/v1/me/consents/partner", bearer: user.accessToken).status == .noContent)
            #expect(try await client.json(.delete, "/v1/me/consents/partner", bearer: user.accessToken).status == .notFound)
            #expect(try await client.json(.get, "/v1/me", bearer: partnerAccess).status == .unauthorized)
            #expect(try await jar.open(partner([])).text.contains("id=\"consent\""))
        }
    }

    @Test("HS-7: pages speak the reader's language: Accept-Language nb gives Norwegian, ui_locales overrides the header, an unknown language falls back to English; the client's name and colour brand the page and its text is escaped")
    func languagesAndBranding() async throws {
        let server = try await TestServer.start(.sqlite)
        _ = try await server.createClient(
            id: "brand", redirectURIs: [Self.spa], settings: ["brand_color=#aa3300", "logo_url=https://cdn.example.com/logo.png"])
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(id: "brand", settings: [], name: "Tom & <Jerry>")
        try await server.withRouter { client in
            let pkce = pkcePair()
            let uri = Self.request("brand", challenge: pkce.challenge)
            let jar = HostedJar(client)
            jar.acceptLanguage = "nb-NO,nb;q=0.9,en;q=0.5"
            let norwegian = try await jar.open(uri)
            #expect(norwegian.text.contains("<html lang=\"nb\">") && norwegian.text.contains("Logg inn"), "\(norwegian.text)")
            jar.acceptLanguage = "en"
            let override = try await jar.open(Self.request("brand", challenge: pkce.challenge, extra: [("ui_locales", "nb en")]))
            #expect(override.text.contains("<html lang=\"nb\">"))
            jar.acceptLanguage = "fr"
            let english = try await jar.open(uri)
            #expect(english.text.contains("<html lang=\"en\">") && english.text.contains("Sign in"))
            #expect(english.text.contains("#aa3300") && english.text.contains("https://cdn.example.com/logo.png"))
            #expect(english.text.contains("Tom &amp; &lt;Jerry&gt;") && !english.text.contains("<Jerry>") && !english.text.contains("&amp;amp;"))
        }
        await server.stop()
    }

    @Test("HS-8: a verification link of a client whose terms and required fields the user lacks goes through the terms page and the required-fields page, then returns to the app with its code, which the app redeems with its verifier")
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
                ["client_id": "mobile", "email": email, "password": "a long enough password", "redirect_to": "com.example.app:/verified",
                 "code_challenge": pkce.challenge, "code_challenge_method": "S256"])
            #expect(signup.status == .created, "\(signup.text)")
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: email, kind: "verification")?.linkPath("/verify?token="))
            let jar = HostedJar(client)
            let page = try await jar.open(path)
            let verified = try await jar.submit("/verify", [("token", HostedJar.attribute(page.text, after: "name=\"token\" value=\"") ?? "")], csrf: HostedJar.csrf(page))
            #expect(verified.status == .ok && verified.text.contains("id=\"terms\""), "\(verified.status) \(verified.text)")
            let noTick = try await jar.submit(try #require(HostedJar.action(verified, form: "terms")), [], csrf: HostedJar.csrf(verified))
            #expect(noTick.status == .unprocessableContent && noTick.text.contains("id=\"error\""))
            let fields = try await jar.submit(try #require(HostedJar.action(verified, form: "terms")), [("accept", "yes")], csrf: HostedJar.csrf(verified))
            #expect(fields.text.contains("id=\"field-given_name\""), "\(fields.text)")
            let blank = try await jar.submit(try #require(HostedJar.action(fields, form: "fields")), [("given_name", "  ")], csrf: HostedJar.csrf(fields))
            #expect(blank.status == .unprocessableContent && blank.text.contains("field-given_name-error"))
            let done = try await jar.submit(try #require(HostedJar.action(fields, form: "fields")), [("given_name", "Grace")], csrf: HostedJar.csrf(fields))
            #expect(done.status == .seeOther && done.headers[.location]?.hasPrefix("com.example.app:/verified?code=") == true, "\(done.headers)")
            let tokens = try await Self.exchange(
                client, code: try #require(HostedJar.query(done)["code"]), verifier: pkce.verifier, id: "mobile", redirect: "com.example.app:/verified")
            #expect(tokens.status == .ok, "\(tokens.text)")
            let user = try #require(tokens.object["user"] as? [String: Any])
            #expect(user["agreements_up_to_date"] as? Bool == true && (user["missing_required_fields"] as? [String])?.isEmpty == true, "\(user)")
        }
    }

    @Test("HS-9: /userinfo answers GET and POST with the claims the token's scopes release; a token without openid gets 403 insufficient_scope, no token 401")
    func userInfo() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            _ = try await client.json(.patch, "/v1/me", ["profile": ["name": "Ada"]], bearer: user.accessToken)
            #expect(try await client.json(.get, "/userinfo").status == .unauthorized)
            let withoutOpenID = try await client.json(.get, "/userinfo", bearer: user.accessToken)
            #expect(withoutOpenID.status == .forbidden && withoutOpenID.headers[.wwwAuthenticate]?.contains("insufficient_scope") == true)
            let jar = HostedJar(client)
            for scope in ["openid", "openid email profile"] {
                let pkce = pkcePair()
                let uri = authorizeURI([
                    ("response_type", "code"), ("client_id", "spa"), ("redirect_uri", Self.spa), ("scope", scope), ("code_challenge", pkce.challenge),
                    ("code_challenge_method", "S256"),
                ])
                let answer = jar.cookies["gh_session"] == nil
                    ? try await Self.signIn(jar, uri, email: user.email, password: user.password) : try await jar.send(.get, uri)
                let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
                let access = try #require(tokens.string("access_token"))
                for method in [HTTPRequest.Method.get, .post] {
                    let info = try await client.json(method, "/userinfo", bearer: access)
                    #expect(info.status == .ok && info.headers[.cacheControl] == "no-store")
                    #expect(info.string("sub") == (try decodeClaims(access))["sub"] as? String)
                    #expect((info.string("email") != nil) == scope.contains("email") && (info.string("name") == "Ada") == scope.contains("profile"), "\(scope): \(info.text)")
                }
                let id = try decodeClaims(try #require(tokens.string("id_token")))
                #expect((id["email"] != nil) == scope.contains("email") && (id["name"] as? String == "Ada") == scope.contains("profile"))
            }
        }
    }

    @Test("HS-10: the hosted sign-up page creates the account and signs the browser in when the client needs no verification (then the client gets its code); with verification it says to check the mail; the recovery page sends the mail and says so; unknown flows, actions and bodies get 4xx pages")
    func signUpRecoveryAndBadInput() async throws {
        let (server, _) = try await Self.start()
        _ = try await server.createClient(id: "verified", redirectURIs: [Self.spa])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let page = try await jar.open(Self.request(challenge: pkce.challenge))
            let signupPath = try #require(HostedJar.attribute(page.text, after: "id=\"signup-link\" href=\""))
            let signupPage = try await jar.open(signupPath)
            #expect(signupPage.text.contains("id=\"signup\""))
            let email = "page-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let short = try await jar.submit(try #require(HostedJar.action(signupPage, form: "signup")), [("email", email), ("password", "short")], csrf: HostedJar.csrf(signupPage))
            #expect(short.status == .unprocessableContent && short.text.contains("id=\"error\""))
            let created = try await jar.submit(
                try #require(HostedJar.action(signupPage, form: "signup")), [("email", email), ("password", "a page chosen passphrase")], csrf: HostedJar.csrf(signupPage))
            #expect(created.status == .seeOther && HostedJar.query(created)["code"] != nil, "\(created.text)")
            let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(created)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok)

            let other = HostedJar(client)
            let verifiedPage = try await other.open(Self.request("verified", challenge: pkcePair().challenge))
            let signup2 = try await other.open(try #require(HostedJar.attribute(verifiedPage.text, after: "id=\"signup-link\" href=\"")))
            let pending = try await other.submit(
                try #require(HostedJar.action(signup2, form: "signup")), [("email", "pending-" + email), ("password", "a page chosen passphrase")],
                csrf: HostedJar.csrf(signup2))
            #expect(pending.status == .ok && pending.text.contains("pending-" + email), "\(pending.text)")
            #expect(other.cookies["gh_session"] == nil)

            let recoveryPage = try await other.open(try #require(HostedJar.attribute(verifiedPage.text, after: "id=\"recovery-link\" href=\"")))
            let sent = try await other.submit(try #require(HostedJar.action(recoveryPage, form: "recovery")), [("email", email)], csrf: HostedJar.csrf(recoveryPage))
            #expect(sent.status == .ok && sent.text.contains(email))
            try await server.deliverMail()
            #expect(server.lastMail(to: email, kind: "recovery") != nil)

            for (method, uri) in [
                (HTTPRequest.Method.get, "/authorize/not-a-uuid"), (.get, "/authorize/\(UUID())"), (.post, "/authorize/\(UUID())/password"),
                (.get, "/oauth/authorize?%zz"), (.get, "/oauth/logout?id_token_hint=%%"), (.get, "/web-session"), (.get, "/web-session?token=gh_ws_nope"),
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

    @Test("HS-11: a client that offers one-time codes shows the code form on the sign-in page; the code goes by mail, a wrong one shows the code page again with 401, the right one signs the browser in (an unknown address gets an account) and the client gets its code")
    func oneTimeCode() async throws {
        let (server, _) = try await Self.start(["methods=password,email_otp"])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let page = try await jar.open(Self.request(challenge: pkce.challenge))
            let action = try #require(HostedJar.action(page, form: "otp"), "\(page.text)")
            let email = "code-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let codePage = try await jar.submit(action, [("identifier", email)], csrf: HostedJar.csrf(page))
            #expect(codePage.status == .ok && codePage.text.contains("id=\"otp-verify\"") && codePage.text.contains(email), "\(codePage.text)")
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: email, kind: "otp")?.code)
            let verify = try #require(HostedJar.action(codePage, form: "otp-verify"))
            let wrong = try await jar.submit(verify, [("identifier", email), ("code", code == "000000" ? "111111" : "000000")], csrf: HostedJar.csrf(codePage))
            #expect(wrong.status == .unauthorized && wrong.text.contains("id=\"otp-verify\"") && wrong.text.contains("id=\"error\""))
            let answer = try await jar.submit(verify, [("identifier", email), ("code", code)], csrf: HostedJar.csrf(wrong))
            #expect(answer.status == .seeOther, "\(answer.text)")
            #expect(jar.cookies["gh_session"] != nil)
            let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok)
            let id = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(id["email"] as? String == email && id["amr"] as? [String] == ["otp"] && id["email_verified"] as? Bool == true, "\(id)")
        }
    }

    @Test("HS-12: the client's social providers are buttons on the sign-in page; one leads through the provider (Gatehouse's own state, cookie and PKCE) and back into the flow, which signs the browser in and answers the client with a code; a cancel at the provider comes back to the sign-in page with an error, and the flow goes on")
    func providerButtons() async throws {
        let fake = try await SocialFixtures.startProvider()
        defer { fake.stop() }
        let server = try await SocialFixtures.server(fake)
        _ = try await server.createClient(id: "spa", redirectURIs: [Self.spa], settings: ["email_verification=off", "social_providers=github,x"])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let walk = WebWalk(client: client, fake: fake)
            let pkce = pkcePair()
            let page = try await jar.open(Self.request(challenge: pkce.challenge))
            #expect(page.text.contains("id=\"social-github\"") && page.text.contains("GitHub") && page.text.contains("id=\"social-x\""), "\(page.text)")
            let button = try #require(HostedJar.attribute(page.text, after: "id=\"social-github\" href=\""))

            func viaProvider(deny: Bool) async throws -> TestResponse {
                let toProvider = try await jar.send(.get, button)
                #expect(toProvider.status == .found, "\(toProvider.text)")
                let started = WebWalk.Started(
                    providerURL: try #require(toProvider.headers[.location].flatMap(URL.init(string:))), cookie: nil, status: toProvider.status,
                    text: "")
                let back = try await walk.approve(started, user: "octo", deny: deny)
                return try await jar.send(.get, back.path + (back.query.map { "?" + $0 } ?? ""))
            }
            let cancelled = try await viaProvider(deny: true)
            #expect(cancelled.status == .found && cancelled.headers[.location]?.hasPrefix("/authorize/") == true, "\(cancelled.headers)")
            let shown = try await jar.open(try #require(cancelled.headers[.location]))
            #expect(shown.status == .unauthorized && shown.text.contains("id=\"error\"") && shown.text.contains("id=\"signin\""))

            let landed = try await viaProvider(deny: false)
            #expect(landed.status == .seeOther && landed.headers[.location]?.hasPrefix(Self.spa + "?") == true, "\(landed.status) \(landed.text)")
            #expect(jar.cookies["gh_session"] != nil)
            let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(landed)["code"]), verifier: pkce.verifier)
            #expect(tokens.status == .ok, "\(tokens.text)")
            #expect(try decodeClaims(try #require(tokens.string("id_token")))["amr"] as? [String] == ["fed"])
            // The browser is signed in now: the next authorization needs no provider.
            let again = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(again)["code"] != nil)
        }
    }

    @Test("HS-13: single sign-on does not outlive what ends the user's sessions: a password change and a global logout each end the browser sessions too (prompt=none then answers login_required)")
    func browserSessionsEndWithTheAccountsSessions() async throws {
        let (server, _) = try await Self.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            var password = user.password
            for what in ["password change", "global logout"] {
                let jar = HostedJar(client)
                let pkce = pkcePair()
                let answer = try await Self.signIn(jar, Self.request(challenge: pkce.challenge), email: user.email, password: password)
                let tokens = try await Self.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
                #expect(HostedJar.query(try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")])))["code"] != nil)
                let access = try #require(tokens.string("access_token"))
                if what == "password change" {
                    let next = "another long passphrase"
                    let changed = try await client.json(.put, "/v1/me/password", ["password": next, "current_password": password], bearer: access)
                    #expect(changed.status == .noContent, "\(changed.text)")
                    password = next
                } else {
                    let ended = try await client.json(.post, "/v1/logout", ["scope": "global"], bearer: access)
                    #expect(ended.status == .noContent, "\(ended.text)")
                }
                let after = try await jar.send(.get, Self.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
                #expect(HostedJar.query(after)["error"] == "login_required", "\(what): \(HostedJar.query(after))")
            }
        }
    }
}
