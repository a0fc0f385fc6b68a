import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Every answer the server gives to a broad set of requests is described by its own OpenAPI document:
/// the route, the status, the content type, the required headers and the body's schema.
@Suite("OpenAPI conformance")
struct OpenAPIConformanceTests {
    @Test("Real answers match the served document")
    func answersMatchDocument() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.maxFailuresPerAccount = 3
            $0.identifierStatusPerMinute = 2
            $0.metricsToken = "m"
        }
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        try await server.createClient(
            id: "full", redirectURIs: ["com.example.app:/cb"],
            settings: [
                "methods=password,email_otp,sms_otp", "identifier_status=on", "terms_platform_version=1",
                "terms_client_version=a", "terms_client_url=https://example.com/t", "required_fields=given_name",
            ])
        let secret = try #require(backend.secret)
        try await server.withRouter { client in
            let document = try OpenAPIDocument(yaml: try await client.json(.get, "/openapi.yaml").text)
            var problems: [String] = []
            var checked = 0
            func check(_ method: HTTPRequest.Method, _ path: String, _ response: TestResponse) {
                checked += 1
                problems += document.check(method: method.rawValue, path: path, response: response)
            }

            // Accounts
            let user = try await signUp(client)
            check(
                .post, "/v1/signup",
                try await client.json(
                    .post, "/v1/signup",
                    [
                        "client_id": TestServer.openClient, "email": "x-\(UUID())@example.com", "password": "correct horse battery",
                        "profile": ["name": "X"],
                    ]))
            check(
                .post, "/v1/signup",
                try await client.json(.post, "/v1/signup", ["email": "pending@example.com", "password": "correct horse battery"]))
            check(
                .post, "/v1/signup",
                try await client.json(
                    .post, "/v1/signup", ["client_id": TestServer.openClient, "email": user.email, "password": "correct horse battery"]))
            check(
                .post, "/v1/signup",
                try await client.json(.post, "/v1/signup", ["client_id": TestServer.openClient, "email": "bad", "password": "x"]))
            check(
                .post, "/v1/signup",
                try await client.json(.post, "/v1/signup", ["client_id": "nope", "email": "a@b.co", "password": "correct horse battery"]))
            check(.post, "/v1/signup", try await client.raw(.post, "/v1/signup", body: Array("{".utf8), contentType: "application/json"))
            check(.post, "/v1/signup", try await client.raw(.post, "/v1/signup", body: Array("{}".utf8), contentType: "text/plain"))
            check(
                .post, "/v1/signup",
                try await client.raw(.post, "/v1/signup", body: Array(repeating: 32, count: (1 << 20) + 1), contentType: "application/json")
            )
            check(
                .post, "/v1/login",
                try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password]))
            check(
                .post, "/v1/login",
                try await client.json(.post, "/v1/login", ["email": "pending@example.com", "password": "correct horse battery"]))
            for _ in 0..<3 {
                check(
                    .post, "/v1/login",
                    try await client.json(
                        .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": "wrong password"]))
            }
            check(
                .post, "/v1/login",
                try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password]))
            check(.post, "/v1/login", try await client.json(.post, "/v1/login", ["client_id": TestServer.openClient]))

            // The signed-in user
            check(.get, "/v1/me", try await client.json(.get, "/v1/me", bearer: user.accessToken))
            check(.get, "/v1/me", try await client.json(.get, "/v1/me"))
            check(.get, "/v1/me", try await client.json(.get, "/v1/me", bearer: "nope"))
            check(
                .patch, "/v1/me",
                try await client.json(.patch, "/v1/me", ["profile": ["family_name": "Lovelace"]], bearer: user.accessToken))
            check(
                .patch, "/v1/me", try await client.json(.patch, "/v1/me", ["profile": ["birthdate": "tomorrow"]], bearer: user.accessToken))
            check(.get, "/v1/me/sessions", try await client.json(.get, "/v1/me/sessions", bearer: user.accessToken))
            let other = try await signUp(client)
            check(
                .delete, "/v1/me/sessions/\(other.sessionID)",
                try await client.json(.delete, "/v1/me/sessions/\(other.sessionID)", bearer: user.accessToken))
            let second = try await signUp(client, email: "second-\(UUID())@example.com")
            let again = try await logIn(client, email: second.email, password: second.password)
            check(
                .delete, "/v1/me/sessions/\(again.sessionID)",
                try await client.json(.delete, "/v1/me/sessions/\(again.sessionID)", bearer: second.accessToken))
            check(.put, "/v1/me/password", try await client.json(.put, "/v1/me/password", ["password": "x"], bearer: second.accessToken))
            check(
                .put, "/v1/me/password",
                try await client.json(
                    .put, "/v1/me/password", ["password": "another long one", "current_password": second.password],
                    bearer: second.accessToken))

            // Device authenticators
            let holder = try await signUp(client)
            var device = TestDevice()
            check(.post, "/v1/me/authenticators", try await client.register(&device, bearer: holder.accessToken))
            var duplicate = device
            check(.post, "/v1/me/authenticators", try await client.register(&duplicate, bearer: holder.accessToken))
            check(
                .post, "/v1/me/authenticators",
                try await client.json(
                    .post, "/v1/me/authenticators", ["type": "custom", "device_id": "x", "public_key": "AAAA"], bearer: holder.accessToken))
            check(.get, "/v1/me/authenticators", try await client.json(.get, "/v1/me/authenticators", bearer: holder.accessToken))
            check(.post, "/v1/authenticators/challenge", try await client.challenge(device))
            check(
                .post, "/v1/authenticators/challenge",
                try await client.json(
                    .post, "/v1/authenticators/challenge", ["client_id": TestServer.openClient, "authenticator_id": "nope"]))
            check(
                .post, "/v1/authenticators/challenge",
                try await client.json(.post, "/v1/authenticators/challenge", ["client_id": TestServer.openClient]))
            check(.post, "/v1/authenticators/authenticate", try await client.answer(device))
            check(.post, "/v1/authenticators/authenticate", try await client.answer(device, wrongKey: .init()))
            check(
                .post, "/v1/authenticators/authenticate",
                try await client.json(
                    .post, "/v1/authenticators/authenticate",
                    ["client_id": TestServer.openClient, "challenge_id": UUID().uuidString, "signature": String(repeating: "A", count: 86)])
            )
            check(.get, "/v1/me/sessions", try await client.json(.get, "/v1/me/sessions", bearer: holder.accessToken))
            check(
                .delete, "/v1/me/authenticators/\(device.authenticatorID)",
                try await client.json(.delete, "/v1/me/authenticators/\(device.authenticatorID)", bearer: holder.accessToken))
            check(
                .delete, "/v1/me/authenticators/nope",
                try await client.json(.delete, "/v1/me/authenticators/nope", bearer: holder.accessToken))
            check(.post, "/v1/authenticators/challenge", try await client.challenge(device))

            // OAuth
            let refreshed = try await refresh(client, second.refreshToken)
            check(.post, "/oauth/token", refreshed)
            check(
                .post, "/oauth/token",
                try await client.form(
                    "/oauth/token", ["grant_type": "refresh_token", "refresh_token": "gh_r_nope", "client_id": TestServer.openClient]))
            check(
                .post, "/oauth/token",
                try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("backend", secret)))
            check(
                .post, "/oauth/token",
                try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("backend", "wrong")))
            check(.post, "/oauth/token", try await client.form("/oauth/token", ["grant_type": "magic"]))
            check(
                .post, "/oauth/token", try await client.raw(.post, "/oauth/token", body: Array("{}".utf8), contentType: "application/json"))
            check(
                .post, "/oauth/introspect",
                try await client.form("/oauth/introspect", ["token": second.accessToken], basic: ("backend", secret)))
            check(.post, "/oauth/introspect", try await client.form("/oauth/introspect", ["token": "junk"], basic: ("backend", secret)))
            check(.post, "/oauth/introspect", try await client.form("/oauth/introspect", ["token": "junk"], basic: ("backend", "wrong")))
            check(
                .post, "/oauth/revoke",
                try await client.form("/oauth/revoke", ["token": user.refreshToken, "client_id": TestServer.openClient]))
            check(.post, "/v1/logout", try await client.json(.post, "/v1/logout", ["scope": "global"], bearer: user.accessToken))
            check(.post, "/v1/logout", try await client.json(.post, "/v1/logout", ["scope": "everything"], bearer: second.accessToken))

            // Verification and recovery
            let email = "mailflow@example.com"
            check(
                .post, "/v1/signup",
                try await client.json(
                    .post, "/v1/signup",
                    ["client_id": "full", "email": email, "password": "correct horse battery", "redirect_to": "com.example.app:/cb"]))
            check(
                .post, "/v1/signup",
                try await client.json(
                    .post, "/v1/signup",
                    [
                        "client_id": "full", "email": email, "password": "correct horse battery", "redirect_to": "com.example.app:/cb",
                        "code_challenge": String(repeating: "a", count: 43), "code_challenge_method": "S256",
                    ]))
            try await server.deliverMail()
            let verification = try #require(server.lastMail(to: email, kind: "verification"))
            check(.post, "/v1/verification", try await client.json(.post, "/v1/verification", ["client_id": "full", "email": email]))
            check(.post, "/v1/verification", try await client.json(.post, "/v1/verification", ["client_id": "full", "email": email]))
            check(.post, "/v1/verify", try await client.json(.post, "/v1/verify", ["client_id": "full", "email": email, "code": "000000"]))
            check(.post, "/v1/verify", try await client.json(.post, "/v1/verify", ["client_id": "full"]))
            let verifyPath = try #require(verification.linkPath("/verify?token="))
            check(.get, "/verify", try await client.json(.get, verifyPath))
            check(.post, "/verify", try await client.form("/verify", ["token": "x", "csrf": "y"]))
            check(.post, "/verify", try await confirmLink(client, verifyPath))
            check(.post, "/verify", try await client.raw(.post, "/verify", body: Array("{}".utf8), contentType: "application/json"))
            check(.get, "/verify", try await client.json(.get, verifyPath))
            check(.get, "/verify", try await client.json(.get, "/verify"))
            check(
                .post, "/oauth/token",
                try await client.form(
                    "/oauth/token",
                    [
                        "grant_type": "authorization_code", "code": "gh_ac_nope", "client_id": "full",
                        "redirect_uri": "com.example.app:/cb", "code_verifier": String(repeating: "v", count: 43),
                    ]))
            check(.post, "/v1/recovery", try await client.json(.post, "/v1/recovery", ["client_id": "full", "email": email]))
            check(.post, "/v1/recovery", try await client.json(.post, "/v1/recovery", ["client_id": "full", "email": email]))
            check(.post, "/v1/recovery", try await client.json(.post, "/v1/recovery", ["client_id": "full", "email": "not an email"]))
            try await server.deliverMail()
            let recovery = try #require(server.lastMail(to: email, kind: "recovery"))
            let resetPath = try #require(recovery.linkPath("/reset?token="))
            check(.get, "/reset", try await client.json(.get, resetPath))
            check(.get, "/reset", try await client.json(.get, "/reset"))
            check(
                .post, "/reset",
                try await client.raw(
                    .post, "/reset", body: Array("token=x&csrf=y&password=a&confirm=a".utf8),
                    contentType: "application/x-www-form-urlencoded"))
            check(.post, "/reset", try await client.raw(.post, "/reset", body: Array("{}".utf8), contentType: "application/json"))
            check(
                .post, "/v1/recovery/verify",
                try await client.json(
                    .post, "/v1/recovery/verify", ["client_id": "full", "email": email, "code": try #require(recovery.code)]))
            check(
                .post, "/v1/recovery/verify",
                try await client.json(.post, "/v1/recovery/verify", ["client_id": "full", "email": email, "code": "000000"]))

            // Passwordless codes and what the app may ask
            check(.post, "/v1/otp", try await client.json(.post, "/v1/otp", ["client_id": "full", "email": "otp@example.com"]))
            check(.post, "/v1/otp", try await client.json(.post, "/v1/otp", ["client_id": "full", "email": "otp@example.com"]))
            check(.post, "/v1/otp", try await client.json(.post, "/v1/otp", ["client_id": "full", "phone": "12345"]))
            check(.post, "/v1/otp", try await client.json(.post, "/v1/otp", ["email": "otp@example.com"]))
            try await server.deliverMail()
            let otp = try #require(server.lastMail(to: "otp@example.com", kind: "otp")?.code)
            check(
                .post, "/v1/otp/verify",
                try await client.json(.post, "/v1/otp/verify", ["client_id": "full", "email": "otp@example.com", "code": "000000"]))
            let otpSignIn = try await client.json(
                .post, "/v1/otp/verify",
                ["client_id": "full", "email": "otp@example.com", "code": otp, "accept_terms": true, "scope": "openid", "nonce": "abc"])
            check(.post, "/v1/otp/verify", otpSignIn)
            let otpAccess = try #require(otpSignIn.string("access_token"))
            for path in [
                "/v1/terms?client_id=full", "/v1/required-fields?client_id=full", "/v1/client?client_id=full",
                "/v1/client?client_id=nope", "/v1/identifiers/status?email=a@b.co",
            ] {
                check(.get, path, try await client.json(.get, path, bearer: path == "/metrics" ? "m" : nil))
            }
            check(.get, "/metrics", try await client.json(.get, "/metrics"))
            for path in [
                "/v1/identifiers/status?client_id=full&email=otp@example.com", "/v1/identifiers/status?client_id=full&phone=bad",
                "/v1/identifiers/status?client_id=full&email=x@example.com",
            ] {
                check(.get, path, try await client.json(.get, path))
            }
            check(.get, "/v1/me/agreements", try await client.json(.get, "/v1/me/agreements", bearer: otpAccess))
            check(
                .post, "/v1/me/agreements",
                try await client.json(.post, "/v1/me/agreements", ["platform_version": "1", "client_version": "a"], bearer: otpAccess))
            check(
                .post, "/v1/me/agreements",
                try await client.json(.post, "/v1/me/agreements", ["platform_version": "0", "client_version": "a"], bearer: otpAccess))
            check(.get, "/v1/me/required-fields", try await client.json(.get, "/v1/me/required-fields", bearer: otpAccess))

            // Discovery and operations
            for path in [
                "/.well-known/openid-configuration", "/.well-known/jwks.json", "/health/live", "/health/ready", "/metrics", "/openapi.yaml",
            ] {
                check(.get, path, try await client.json(.get, path))
            }

            // The hosted sign-in
            let jar = HostedJar(client)
            let hostedPKCE = pkcePair()
            let authorize = authorizeURI([
                ("response_type", "code"), ("client_id", "full"), ("redirect_uri", "com.example.app:/cb"), ("scope", "openid profile"),
                ("state", "s"),
                ("code_challenge", hostedPKCE.challenge), ("code_challenge_method", "S256"),
            ])
            let started = try await jar.send(.get, authorize)
            check(.get, "/oauth/authorize", started)
            check(.get, "/oauth/authorize", try await jar.send(.get, authorizeURI([("client_id", "nope")])))
            check(
                .get, "/oauth/authorize",
                try await jar.send(
                    .get, authorizeURI([("client_id", "full"), ("redirect_uri", "com.example.app:/cb"), ("scope", "openid")])))
            check(.post, "/oauth/authorize", try await client.json(.post, "/oauth/authorize", ["client_id": "full"]))
            let flowPath = started.headers[.location] ?? "/authorize/\(UUID())"
            let signInPage = try await jar.send(.get, flowPath)
            check(.get, flowPath, signInPage)
            check(.get, "/authorize/\(UUID())", try await jar.send(.get, "/authorize/\(UUID())"))
            let hostedCSRF = HostedJar.csrf(signInPage) ?? ""
            check(
                .post, flowPath + "/password",
                try await jar.send(.post, flowPath + "/password", form: [("email", user.email), ("password", user.password)]))
            check(
                .post, flowPath + "/password",
                try await jar.send(
                    .post, flowPath + "/password", form: [("csrf", hostedCSRF), ("email", user.email), ("password", "wrong")]))
            check(
                .post, flowPath + "/password",
                try await jar.send(
                    .post, flowPath + "/password", form: [("csrf", hostedCSRF), ("email", user.email), ("password", user.password)]))
            let fieldsPage = try await jar.send(.get, flowPath)
            check(.get, flowPath, fieldsPage)
            check(
                .post, flowPath + "/fields",
                try await jar.send(.post, flowPath + "/fields", form: [("csrf", hostedCSRF), ("given_name", "")]))
            check(.post, flowPath + "/cancel", try await jar.send(.post, flowPath + "/cancel", form: [("csrf", hostedCSRF)]))
            check(.post, flowPath + "/cancel", try await jar.send(.post, flowPath + "/cancel", form: [("csrf", hostedCSRF)]))
            check(.get, "/oauth/logout", try await jar.send(.get, "/oauth/logout?client_id=full"))
            check(.get, "/oauth/logout", try await jar.send(.get, "/oauth/logout?post_logout_redirect_uri=https%3A%2F%2Fevil.example"))
            check(.post, "/oauth/logout", try await jar.send(.post, "/oauth/logout", form: [("confirm", "yes")]))
            check(.get, "/userinfo", try await client.json(.get, "/userinfo"))
            check(.get, "/userinfo", try await client.json(.get, "/userinfo", bearer: user.accessToken))
            check(
                .post, "/v1/web-session",
                try await client.json(.post, "/v1/web-session", ["redirect_to": "//evil.example"], bearer: user.accessToken))
            check(.post, "/v1/web-session", try await client.json(.post, "/v1/web-session", [:]))
            let webSession = try await client.json(.post, "/v1/web-session", ["redirect_to": "/account"], bearer: user.accessToken)
            check(.post, "/v1/web-session", webSession)
            let webQuery = URLComponents(string: webSession.string("url") ?? "")?.percentEncodedQuery ?? ""
            check(.get, "/web-session", try await jar.send(.get, "/web-session?" + webQuery))
            check(.get, "/web-session", try await jar.send(.get, "/web-session?" + webQuery))
            check(.get, "/web-session", try await jar.send(.get, "/web-session"))
            check(.get, "/v1/me/consents", try await client.json(.get, "/v1/me/consents", bearer: user.accessToken))
            check(.delete, "/v1/me/consents/nobody", try await client.json(.delete, "/v1/me/consents/nobody", bearer: user.accessToken))

            // The admin API
            let admin = try await adminToken(server, client, id: "ops", scopes: ["admin"])
            let reader = try await adminToken(server, client, id: "reader", scopes: ["admin:read"])
            func adminCheck(
                _ method: HTTPRequest.Method, _ path: String, _ body: [String: any Sendable]? = nil, bearer: String? = nil
            ) async throws -> TestResponse {
                let answer = try await client.json(method, path, body, bearer: bearer ?? admin)
                check(method, path.split(separator: "?").first.map(String.init) ?? path, answer)
                return answer
            }
            let made = try await adminCheck(
                .post, "/admin/v1/users",
                ["email": "ops-made@example.com", "password": "correct horse battery", "profile": ["given_name": "Op"]])
            let madeID = made.string("id") ?? "none"
            _ = try await adminCheck(.post, "/admin/v1/users", ["email": "ops-made@example.com"])
            _ = try await adminCheck(.post, "/admin/v1/users", ["email": "not an address"])
            _ = try await adminCheck(.post, "/admin/v1/users", ["email": "x@example.com"], bearer: reader)
            _ = try await adminCheck(.get, "/admin/v1/users?email=ops-&limit=1")
            _ = try await adminCheck(.get, "/admin/v1/users?limit=0")
            _ = try await adminCheck(.get, "/admin/v1/users", bearer: user.accessToken)
            _ = try await adminCheck(.get, "/admin/v1/users/\(madeID)")
            _ = try await adminCheck(.get, "/admin/v1/users/\(UUID())")
            _ = try await adminCheck(.patch, "/admin/v1/users/\(madeID)", ["app_metadata": ["tier": "gold"], "email_verified": true])
            let opsUser = try await logIn(client, email: "ops-made@example.com", password: "correct horse battery")
            _ = try await adminCheck(.get, "/admin/v1/users/\(madeID)/sessions")
            _ = try await adminCheck(.get, "/admin/v1/users/\(madeID)/export")
            _ = try await adminCheck(.delete, "/admin/v1/sessions/\(opsUser.sessionID)")
            _ = try await adminCheck(.delete, "/admin/v1/sessions/\(opsUser.sessionID)")
            _ = try await adminCheck(.post, "/admin/v1/users/\(madeID)/sign-out")
            _ = try await adminCheck(.post, "/admin/v1/users/\(madeID)/password-reset")
            _ = try await adminCheck(.post, "/admin/v1/users/\(madeID)/disable")
            _ = try await adminCheck(.post, "/admin/v1/users/\(madeID)/enable")
            _ = try await adminCheck(.delete, "/admin/v1/users/\(madeID)")
            _ = try await adminCheck(.get, "/admin/v1/clients")
            _ = try await adminCheck(.post, "/admin/v1/clients", ["client_id": "api-made", "name": "API made", "type": "confidential"])
            _ = try await adminCheck(.post, "/admin/v1/clients", ["name": "Bad", "redirect_uris": ["http://example.com/cb"]])
            _ = try await adminCheck(.get, "/admin/v1/clients/api-made")
            _ = try await adminCheck(.patch, "/admin/v1/clients/api-made", ["settings": ["email_verification": "off"]])
            _ = try await adminCheck(.delete, "/admin/v1/clients/api-made")
            _ = try await adminCheck(.get, "/admin/v1/clients/api-made")
            _ = try await adminCheck(.get, "/admin/v1/keys")
            _ = try await adminCheck(.post, "/admin/v1/keys/rotate")
            _ = try await adminCheck(.post, "/admin/v1/keys/unknown/revoke")
            _ = try await adminCheck(.get, "/admin/v1/audit?limit=3")
            _ = try await adminCheck(.get, "/admin/v1/audit?since=yesterday")

            #expect(checked >= 140)
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }
}
