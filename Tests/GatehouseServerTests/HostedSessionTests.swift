import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Single sign-on, logout, web sessions, consent and userinfo, through the router: what a browser
/// signed in to the hosted pages keeps, and how it ends.
@Suite("Hosted sign-in: browser sessions, logout, web sessions, consent, userinfo")
struct HostedSessionTests {
    @Test(
        "HS-3: single sign-on: a signed-in browser gets a code at once (acr 0, the first sign-in's auth_time), also with prompt=none; prompt=login and max_age=0 show the sign-in page; select_account offers to continue as the user; form_post answers with a self-posting form whose only script is allowed by its hash and whose only other form target is the client"
    )
    func singleSignOn() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let first = try await Hosted.signIn(jar, Hosted.request(challenge: pkce.challenge), email: user.email, password: user.password)
            let firstTokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(first)["code"]), verifier: pkce.verifier)
            let firstID = try decodeClaims(try #require(firstTokens.string("id_token")))
            #expect(firstID["acr"] as? String == "1")
            server.clock.advance(by: 30)

            for extra in [[], [("prompt", "none")]] {
                let next = pkcePair()
                let answer = try await jar.send(.get, Hosted.request(challenge: next.challenge, extra: extra))
                #expect(answer.status == .seeOther, "\(extra): \(answer.text)")
                let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: next.verifier)
                let id = try decodeClaims(try #require(tokens.string("id_token")))
                #expect(id["acr"] as? String == "0" && id["auth_time"] as? Int == firstID["auth_time"] as? Int, "\(id)")
                // Refreshed ID tokens keep the sign-in's auth_time.
                let refreshed = try await refresh(client, try #require(tokens.string("refresh_token")), clientID: "spa")
                #expect(try decodeClaims(try #require(refreshed.string("id_token")))["auth_time"] as? Int == firstID["auth_time"] as? Int)
            }
            for extra in [[("prompt", "login")], [("max_age", "0")], [("max_age", "10")]] {
                let page = try await jar.open(Hosted.request(challenge: pkce.challenge, extra: extra))
                #expect(page.status == .ok && page.text.contains("id=\"signin\""), "\(extra)")
                #expect(!page.text.contains("id=\"continue\""), "\(extra) must not offer the old session")
            }
            let fresh = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("max_age", "3600")]))
            #expect(fresh.status == .seeOther, "max_age larger than the session's age needs no sign-in")
            let chooser = try await jar.open(Hosted.request(challenge: pkce.challenge, extra: [("prompt", "select_account")]))
            #expect(chooser.text.contains("id=\"continue\"") && chooser.text.contains(user.email.lowercased()))
            let continued = try await jar.submit(
                try #require(HostedJar.action(chooser, form: "continue")), [], csrf: HostedJar.csrf(chooser))
            #expect(continued.status == .seeOther && HostedJar.query(continued)["code"] != nil)

            let posted = try await jar.send(
                .get, Hosted.request(challenge: pkce.challenge, state: "fp<\"'>", extra: [("response_mode", "form_post")]))
            #expect(posted.status == .ok)
            let csp = try #require(posted.headers[.contentSecurityPolicy])
            let hash = "sha256-" + Data(SHA256.hash(data: Data("document.forms[0].submit()".utf8))).base64EncodedString()
            #expect(csp.contains("script-src '\(hash)'") && csp.contains("form-action 'self' https://app.example.com"), "\(csp)")
            #expect(posted.text.contains("action=\"https://app.example.com/cb\"") && posted.text.contains("name=\"code\""))
            #expect(
                posted.text.contains("value=\"fp&lt;&quot;&#39;&gt;\"") || posted.text.contains("value=\"fp&lt;&quot;&#x27;&gt;\""),
                "the state is escaped: \(posted.text)")
        }
    }

    @Test(
        "HS-4: RP-initiated logout: an unregistered or foreign post_logout_redirect_uri, or one without a known client, is a page and never a redirect; without an id_token_hint the user is asked first (a link alone signs no one out) and the confirmation needs its CSRF token; with the hint of this browser's user, logout ends the browser session and every app session it signed in, clears the cookie and returns to the registered URI with the state"
    )
    func rpLogout() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let answer = try await Hosted.signIn(jar, Hosted.request(challenge: pkce.challenge), email: user.email, password: user.password)
            let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
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
            let confirm = try await jar.send(
                .get,
                "/oauth/logout?"
                    + FormEncoding.encode([
                        ("client_id", "spa"), ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "b y+e"),
                    ]))
            #expect(confirm.status == .ok && confirm.text.contains("id=\"logout\""), "\(confirm.text)")
            let noToken = try await jar.send(.post, "/oauth/logout", form: [("confirm", "yes"), ("client_id", "spa")])
            #expect(noToken.status == .forbidden)
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .ok, "nothing ended yet")

            let ended = try await jar.send(
                .get,
                "/oauth/logout?"
                    + FormEncoding.encode([
                        ("id_token_hint", idToken), ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "b y+e"),
                    ]))
            #expect(ended.status == .seeOther)
            #expect(ended.headers[.location] == "https://app.example.com/bye?state=b%20y%2Be")
            #expect(jar.cookies["gh_session"] == nil)
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .unauthorized)
            let prompt = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(prompt)["error"] == "login_required")
        }
    }

    @Test(
        "HS-5: from the app into the web: POST /v1/web-session gives a one-time URL that signs a browser in as the app's user and lands on the path asked for; used twice it is a page that says so; the browser's session keeps the app's sign-in time (auth_time, max_age); a browser signed in as someone else is not switched (409 page); a third-party client's token gets none; redirect_to outside this server, the client's redirect URIs and its origins is refused (//host, backslashes, other hosts, javascript:); then the browser's authorization needs no password"
    )
    func webSession() async throws {
        let (server, _) = try await Hosted.start(["allowed_origins=https://app.example.com"])
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            #expect(try await client.json(.post, "/v1/web-session", [:]).status == .unauthorized)
            for target in [
                "//evil.example/x", "/\\evil.example", "https://evil.example/account", "javascript:alert(1)",
                "https://app.example.com.evil.example/", "/a b",
            ] {
                let refused = try await client.json(.post, "/v1/web-session", ["redirect_to": target], bearer: user.accessToken)
                #expect(refused.status == .unprocessableContent, "\(target): \(refused.text)")
            }
            for target in ["https://app.example.com/account?tab=1", Hosted.spa] {
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
            #expect(opened.status == .seeOther && opened.headers[.location] == Hosted.issuer + "/account")
            #expect(jar.cookies["gh_session"] != nil)
            let reused = try await HostedJar(client).send(.get, path)
            #expect(reused.status == .gone && reused.headers[.location] == nil)
            let pkce = pkcePair()
            server.clock.advance(by: 120)
            let answer = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            let tokens = try await Hosted.exchange(
                client, code: try #require(HostedJar.query(answer)["code"], "\(answer.text)"), verifier: pkce.verifier)
            #expect(
                try decodeClaims(try #require(tokens.string("access_token")))["sub"] as? String == (try decodeClaims(user.accessToken))[
                    "sub"] as? String)
            // auth_time is the app's sign-in, not the moment the link was opened: max_age still means it.
            let idToken = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(idToken["auth_time"] as? Int == (try decodeClaims(user.accessToken))["iat"] as? Int, "\(idToken)")
            let tooOld = try await jar.send(
                .get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none"), ("max_age", "60")]))
            #expect(HostedJar.query(tooOld)["error"] == "login_required")

            // A link of another person's app does not switch a signed-in browser.
            let other = try await signUp(client, clientID: "spa")
            let foreign = try await client.json(.post, "/v1/web-session", ["redirect_to": "/account"], bearer: other.accessToken)
            let foreignLink = try #require(foreign.string("url"))
            let foreignURL = try #require(URLComponents(string: foreignLink))
            let switched = try await jar.send(.get, foreignURL.path + "?" + (foreignURL.percentEncodedQuery ?? ""))
            #expect(switched.status == .conflict && switched.headers[.location] == nil)
            let still = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(still)["code"] != nil, "the browser keeps its own user")

            // A third-party client's token cannot become a browser session.
            let partnerUser = try await client.json(
                .post, "/v1/login", ["client_id": "partner", "email": other.email, "password": other.password])
            let partnerAccess = try #require(partnerUser.string("access_token"), "\(partnerUser.text)")
            let refused = try await client.json(.post, "/v1/web-session", [:], bearer: partnerAccess)
            #expect(refused.status == .forbidden, "\(refused.text)")
        }
    }

    @Test(
        "HS-6: a third-party client asks consent once per user and scopes (prompt=none says consent_required before it; deny answers access_denied), the consent is listed at /v1/me/consents and in the user export, and revoking it ends the client's sessions and brings the page back; prompt=consent asks again; a consent page left open across a sign-out does not finish"
    )
    func consent() async throws {
        let (server, secret) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let partner = { (extra: [(String, String)]) in
                Hosted.request("partner", redirect: Hosted.partnerRedirect, challenge: nil, extra: extra)
            }
            _ = try await Hosted.signIn(jar, Hosted.request(challenge: pkcePair().challenge), email: user.email, password: user.password)
            #expect(HostedJar.query(try await jar.send(.get, partner([("prompt", "none")])))["error"] == "consent_required")
            let page = try await jar.open(partner([]))
            #expect(page.text.contains("id=\"consent\"") && page.text.contains("partner"), "\(page.text)")
            let denied = try await jar.submit(
                try #require(HostedJar.action(page, form: "consent")), [("decision", "deny")], csrf: HostedJar.csrf(page))
            #expect(HostedJar.query(denied)["error"] == "access_denied")
            let again = try await jar.open(partner([]))
            let allowed = try await jar.submit(
                try #require(HostedJar.action(again, form: "consent")), [("decision", "allow")], csrf: HostedJar.csrf(again))
            let code = try #require(HostedJar.query(allowed)["code"], "\(allowed.text)")
            let tokens = try await client.form(
                "/oauth/token", ["grant_type": "authorization_code", "code": code, "redirect_uri": Hosted.partnerRedirect],
                basic: ("partner", secret))
            #expect(tokens.status == .ok, "\(tokens.text)")
            let partnerAccess = try #require(tokens.string("access_token"))
            #expect(try await jar.send(.get, partner([])).status == .seeOther, "consent is remembered")
            let asked = try await jar.open(partner([("prompt", "consent")]))
            #expect(asked.text.contains("id=\"consent\""))
            // Left on its consent page while the browser signs out: it does not finish for whoever comes next.
            let loggedOut = try await jar.send(.get, "/oauth/logout?client_id=spa")
            _ = try await jar.send(
                .post, "/oauth/logout", form: [("csrf", HostedJar.csrf(loggedOut) ?? ""), ("confirm", "yes"), ("client_id", "spa")])
            #expect(jar.cookies["gh_session"] == nil)
            let stale = try await jar.submit(
                try #require(HostedJar.action(asked, form: "consent")), [("decision", "allow")], csrf: HostedJar.csrf(asked))
            #expect(stale.status == .gone && stale.headers[.location] == nil, "\(stale.status)")
            _ = try await Hosted.signIn(jar, Hosted.request(challenge: pkcePair().challenge), email: user.email, password: user.password)

            let list = try await client.json(.get, "/v1/me/consents", bearer: user.accessToken)
            let consents = try #require(list.object["consents"] as? [[String: Any]])
            #expect(
                consents.count == 1 && consents[0]["client_id"] as? String == "partner"
                    && consents[0]["client_name"] as? String == "partner")
            // The user export keeps it too.
            let admin = try await adminToken(server, client, id: "ops", scopes: ["admin"])
            let userID = try #require((try decodeClaims(user.accessToken))["sub"] as? String)
            let export = try await client.json(.get, "/admin/v1/users/\(userID)/export", bearer: admin)
            #expect(
                (export.object["consents"] as? [[String: Any]])?.first?["client_id"] as? String == "partner", "\(export.text.prefix(300))")
            #expect(try await client.json(.delete, "/v1/me/consents/partner", bearer: user.accessToken).status == .noContent)
            #expect(try await client.json(.delete, "/v1/me/consents/partner", bearer: user.accessToken).status == .notFound)
            #expect(try await client.json(.get, "/v1/me", bearer: partnerAccess).status == .unauthorized)
            #expect(try await jar.open(partner([])).text.contains("id=\"consent\""))
        }
    }

    @Test(
        "HS-9: /userinfo answers GET and POST with the claims the token's scopes release; a token without openid gets 403 insufficient_scope, no token 401"
    )
    func userInfo() async throws {
        let (server, _) = try await Hosted.start()
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
                    ("response_type", "code"), ("client_id", "spa"), ("redirect_uri", Hosted.spa), ("scope", scope),
                    ("code_challenge", pkce.challenge),
                    ("code_challenge_method", "S256"),
                ])
                let answer =
                    jar.cookies["gh_session"] == nil
                    ? try await Hosted.signIn(jar, uri, email: user.email, password: user.password) : try await jar.send(.get, uri)
                let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
                let access = try #require(tokens.string("access_token"))
                for method in [HTTPRequest.Method.get, .post] {
                    let info = try await client.json(method, "/userinfo", bearer: access)
                    #expect(info.status == .ok && info.headers[.cacheControl] == "no-store")
                    #expect(info.string("sub") == (try decodeClaims(access))["sub"] as? String)
                    #expect(
                        (info.string("email") != nil) == scope.contains("email")
                            && (info.string("name") == "Ada") == scope.contains("profile"), "\(scope): \(info.text)")
                }
                let id = try decodeClaims(try #require(tokens.string("id_token")))
                #expect((id["email"] != nil) == scope.contains("email") && (id["name"] as? String == "Ada") == scope.contains("profile"))
            }
        }
    }

    @Test(
        "HS-13: single sign-on does not outlive what ends the user's sessions: a password change and a global logout each end the browser sessions too (prompt=none then answers login_required)"
    )
    func browserSessionsEndWithTheAccountsSessions() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            var password = user.password
            for what in ["password change", "global logout"] {
                let jar = HostedJar(client)
                let pkce = pkcePair()
                let answer = try await Hosted.signIn(jar, Hosted.request(challenge: pkce.challenge), email: user.email, password: password)
                let tokens = try await Hosted.exchange(client, code: try #require(HostedJar.query(answer)["code"]), verifier: pkce.verifier)
                #expect(
                    HostedJar.query(try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")])))[
                        "code"] != nil)
                let access = try #require(tokens.string("access_token"))
                if what == "password change" {
                    let next = "another long passphrase"
                    let changed = try await client.json(
                        .put, "/v1/me/password", ["password": next, "current_password": password], bearer: access)
                    #expect(changed.status == .noContent, "\(changed.text)")
                    password = next
                } else {
                    let ended = try await client.json(.post, "/v1/logout", ["scope": "global"], bearer: access)
                    #expect(ended.status == .noContent, "\(ended.text)")
                }
                let after = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
                #expect(HostedJar.query(after)["error"] == "login_required", "\(what): \(HostedJar.query(after))")
            }
        }
    }

    @Test(
        "HS-14: two nodes on one PostgreSQL: a flow started on one node goes on on the other (its page, CSRF token and browser binding hold across them); the same consent form posted to both nodes at once gives exactly one code; single sign-on and RP-initiated logout reach across nodes",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoNodes() async throws {
        try await withTwoNodes(prepare: { server in
            _ = try await server.createClient(
                id: "spa", redirectURIs: [Hosted.spa], settings: ["email_verification=off", "third_party=on"])
        }) { one, two in
            let user = try await signUp(one, clientID: "spa")
            let jar = HostedJar(one)
            let pkce = pkcePair()
            let page = try await jar.open(Hosted.request(challenge: pkce.challenge))
            let action = try #require(HostedJar.action(page, form: "signin"), "\(page.text)")
            jar.client = two
            let consentPage = try await jar.submit(
                action, [("email", user.email), ("password", user.password)], csrf: HostedJar.csrf(page))
            let consentAction = try #require(HostedJar.action(consentPage, form: "consent"), "\(consentPage.text)")

            // One form, posted to both nodes at the same moment: the flow finishes once.
            var headers = HTTPFields()
            headers[.contentType] = "application/x-www-form-urlencoded"
            headers[.cookie] = jar.cookieHeader
            let body = FormEncoding.encode([("csrf", HostedJar.csrf(consentPage) ?? ""), ("decision", "allow")])
            async let first = one.executeRequest(uri: consentAction, method: .post, headers: headers, body: ByteBuffer(string: body))
            async let second = two.executeRequest(uri: consentAction, method: .post, headers: headers, body: ByteBuffer(string: body))
            let answers = try await [first, second]
            let codes = answers.compactMap { HostedJar.query($0)["code"] }
            #expect(codes.count == 1, "\(answers.map(\.status))")
            #expect(answers.contains { $0.status == .gone }, "\(answers.map(\.status))")
            let tokens = try await Hosted.exchange(one, code: try #require(codes.first), verifier: pkce.verifier)
            #expect(tokens.status == .ok, "\(tokens.text)")

            // The browser session signed in on node two signs in on node one.
            jar.client = one
            let sso = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            let code = try #require(HostedJar.query(sso)["code"], "\(HostedJar.query(sso))")
            let again = try await Hosted.exchange(two, code: code, verifier: pkce.verifier)
            let idToken = try #require(again.string("id_token"))
            let access = try #require(again.string("access_token"))

            // Logout on node two ends it for node one.
            jar.client = two
            let ended = try await jar.send(.get, "/oauth/logout?" + FormEncoding.encode([("id_token_hint", idToken)]))
            #expect(ended.status == .ok && ended.text.contains("id=\"logout\"") == false, "\(ended.status)")
            jar.client = one
            let after = try await jar.send(.get, Hosted.request(challenge: pkce.challenge, extra: [("prompt", "none")]))
            #expect(HostedJar.query(after)["error"] == "login_required")
            #expect(try await one.json(.get, "/v1/me", bearer: access).status == .unauthorized)
        }
    }
}
