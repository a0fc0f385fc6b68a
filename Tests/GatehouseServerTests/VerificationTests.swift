import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Email verification")
struct VerificationTests {
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = (0..<4).map { _ in UUID().uuidString }.joined().replacingOccurrences(of: "-", with: "")
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (verifier, challenge)
    }

    @Test("Verify by code: wrong codes count down, the fifth kills it, a resend waits out the cool-down", arguments: TestDatabase.available)
    func verifyByCode(database: TestDatabase) async throws {
        let server = try await TestServer.start(database)
        try await server.withRouter { client in
            let email = "vera@example.com"
            #expect(try await client.json(.post, "/v1/signup", ["email": email, "password": "correct horse battery"]).status == .created)
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: email, kind: "verification"))
            let code = try #require(mail.code)
            #expect(mail.subject?.contains(code) == true)
            #expect(mail.html?.contains(code) == true)
            #expect(mail.link("/verify?token=") != nil)

            let wrong = code == "000000" ? "111111" : "000000"
            for remaining in (0..<5).reversed() {
                let attempt = try await client.json(.post, "/v1/verify", ["email": email, "code": wrong])
                #expect(attempt.status == .unauthorized)
                #expect(attempt.string("code") == "invalid_code")
                #expect(attempt.object["remaining_attempts"] as? Int == remaining)
            }
            let dead = try await client.json(.post, "/v1/verify", ["email": email, "code": code])
            #expect(dead.string("code") == "code_expired")

            // The sign-up's own mail started the cool-down: a resend right away waits.
            let early = try await client.json(.post, "/v1/verification", ["email": email])
            #expect(early.status == .tooManyRequests && early.headers[.retryAfter] != nil, "\(early.text)")
            server.clock.advance(by: 61)
            // A new code; a second resend inside the cool-down is refused with Retry-After.
            let resent = try await client.json(.post, "/v1/verification", ["email": email])
            #expect(resent.status == .accepted && resent.object["resend_after"] as? Int == 60, "\(resent.text)")
            let tooSoon = try await client.json(.post, "/v1/verification", ["email": email])
            #expect(tooSoon.status == .tooManyRequests)
            #expect(tooSoon.headers[.retryAfter] != nil)
            // Unknown addresses get the same answer (after their own cool-down).
            let ghost = try await client.json(.post, "/v1/verification", ["email": "ghost@example.com"])
            #expect(ghost.status == .accepted && ghost.object["resend_after"] as? Int == 60)  // the same answer for nobody
            try await server.deliverMail()
            #expect(server.lastMail(to: "ghost@example.com", kind: "verification") == nil)

            let fresh = try #require(server.lastMail(to: email, kind: "verification")?.code)
            let ok = try await client.json(.post, "/v1/verify", ["email": email, "code": fresh])
            #expect(ok.status == .ok, "\(ok.text)")
            #expect((ok.object["user"] as? [String: Any])?["email_verified"] as? Bool == true)
            let again = try await client.json(.post, "/v1/verify", ["email": email, "code": fresh])
            #expect(again.status == .unauthorized && again.string("code") == "invalid_code")
            let login = try await client.json(.post, "/v1/login", ["email": email, "password": "correct horse battery"])
            #expect(login.status == .ok)
        }
    }

    @Test(
        "The deep link: sign-up with redirect_to and PKCE → mail → link → app redirect with code → token exchange",
        arguments: TestDatabase.available)
    func deepLink(database: TestDatabase) async throws {
        let server = try await TestServer.start(database)
        let redirect = "com.example.app:/verified"
        try await server.createClient(id: "mobile", redirectURIs: [redirect])
        try await server.withRouter { client in
            let (verifier, challenge) = Self.pkce()
            let signup = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": "deep@example.com", "password": "correct horse battery",
                    "redirect_to": redirect, "code_challenge": challenge, "code_challenge_method": "S256",
                ])
            #expect(signup.status == .created)
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: "deep@example.com", kind: "verification")?.linkPath("/verify?token="))

            // Fetching the link (a mail scanner) uses nothing; the page's button does.
            let scanned = try await client.json(.get, path)
            #expect(scanned.status == .ok && scanned.text.contains("<form method=\"post\" action=\"/verify\">"))
            let followed = try await confirmLink(client, path)
            #expect(followed.status == .seeOther)
            let location = try #require(followed.headers[.location])
            #expect(location.hasPrefix(redirect + "?code="))
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)

            let wrongVerifier = try await client.form(
                "/oauth/token",
                [
                    "grant_type": "authorization_code", "code": code, "client_id": "mobile", "redirect_uri": redirect,
                    "code_verifier": String(repeating: "x", count: 50),
                ])
            #expect(wrongVerifier.string("error") == "invalid_grant")
            // The failed attempt consumed the code: codes are single use whatever happens.
            let retry = try await client.form(
                "/oauth/token",
                [
                    "grant_type": "authorization_code", "code": code, "client_id": "mobile", "redirect_uri": redirect,
                    "code_verifier": verifier,
                ])
            #expect(retry.string("error") == "invalid_grant")

            // The link is single use too; the next sign-in goes through a fresh code from a resend…
            #expect(try await client.json(.get, path).status == .gone)
            // …so do the flow again with the right verifier from the start.
            let (verifier2, challenge2) = Self.pkce()
            let second = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": "deep2@example.com", "password": "correct horse battery",
                    "redirect_to": redirect, "code_challenge": challenge2, "code_challenge_method": "S256",
                ])
            #expect(second.status == .created)
            try await server.deliverMail()
            let path2 = try #require(server.lastMail(to: "deep2@example.com", kind: "verification")?.linkPath("/verify?token="))
            let location2 = try #require(try await confirmLink(client, path2).headers[.location])
            let code2 = try #require(URLComponents(string: location2)?.queryItems?.first { $0.name == "code" }?.value)
            let tokens = try await client.form(
                "/oauth/token",
                [
                    "grant_type": "authorization_code", "code": code2, "client_id": "mobile", "code_verifier": verifier2,
                    "redirect_uri": redirect,
                ])
            #expect(tokens.status == .ok, "\(tokens.text)")
            let access = try #require(tokens.string("access_token"))
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect((me.object["email_verified"] as? Bool) == true)
            #expect(try await refresh(client, try #require(tokens.string("refresh_token")), clientID: "mobile").status == .ok)
        }
    }

    @Test("A public client's redirect without PKCE is refused; an unregistered redirect too")
    func pkceRequired() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: "mobile", redirectURIs: ["com.example.app:/verified"])
        try await server.withRouter { client in
            let noPKCE = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": "nopkce@example.com", "password": "correct horse battery",
                    "redirect_to": "com.example.app:/verified",
                ])
            #expect(noPKCE.status == .unprocessableContent)
            #expect((noPKCE.object["errors"] as? [[String: Any]])?.first?["field"] as? String == "code_challenge")
            let plain = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": "plain@example.com", "password": "correct horse battery",
                    "redirect_to": "com.example.app:/verified", "code_challenge": String(repeating: "a", count: 43),
                    "code_challenge_method": "plain",
                ])
            #expect(plain.status == .unprocessableContent)
        }
    }

    @Test("Without a redirect the link shows a localized confirmation page with security headers")
    func confirmationPage() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.withRouter { client in
            _ = try await client.json(
                .post, "/v1/signup", ["email": "page@example.com", "password": "correct horse battery"],
                headers: [.acceptLanguage: "nb-NO,nb;q=0.9,en;q=0.5"])
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: "page@example.com", kind: "verification"))
            #expect(mail.subject?.hasPrefix("Din bekreftelseskode") == true)
            let path = try #require(mail.linkPath("/verify?token="))
            let page = try await confirmLink(client, path, headers: [.acceptLanguage: "en-GB"])
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(page.text.contains("page@example.com is verified"))
            #expect(!page.text.contains("<script"))
            let login = try await client.json(.post, "/v1/login", ["email": "page@example.com", "password": "correct horse battery"])
            #expect(login.status == .ok)
        }
    }
}

@Suite("Code and link lifetimes")
struct LifetimeTests {
    @Test("Codes die after 10 minutes, verification links after 24 hours, recovery links after 1 hour")
    func expiry() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            _ = try await client.json(.post, "/v1/signup", ["email": "late@example.com", "password": "correct horse battery"])
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: "late@example.com", kind: "verification"))
            server.clock.advance(by: 10 * 60 + 1)
            let code = try await client.json(.post, "/v1/verify", ["email": "late@example.com", "code": try #require(mail.code)])
            // Refused like any wrong guess: an expired code is indistinguishable from none at all.
            #expect(code.status == .unauthorized && code.string("code") == "invalid_code")
            // The link outlives the code…
            let verifyPath = try #require(mail.linkPath("/verify?token="))
            let token = try #require(URLComponents(string: verifyPath)?.queryItems?.first?.value)
            server.clock.advance(by: 23 * 3600)
            let link = try await client.json(.post, "/v1/verify", ["token": token])
            #expect(link.status == .ok)

            let user = try await signUp(client)
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            try await server.deliverMail()
            let recovery = try #require(server.lastMail(to: user.email.lowercased(), kind: "recovery"))
            let resetPath = try #require(recovery.linkPath("/reset?token="))
            let recoveryToken = try #require(URLComponents(string: resetPath)?.queryItems?.first?.value)
            server.clock.advance(by: 3601)
            let expired = try await client.json(.post, "/v1/recovery/verify", ["token": recoveryToken])
            #expect(expired.string("code") == "code_expired")
        }
    }

    @Test("Operator templates override the bundled ones file by file")
    func templateOverride() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-templates-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("en"), withIntermediateDirectories: true)
        try "Welcome aboard, code {{{code}}}".write(
            to: directory.appendingPathComponent("en/verification.subject.mustache"), atomically: true, encoding: .utf8)
        let server = try await TestServer.start(.sqlite) { $0.templatesDir = directory.path }
        try await server.withRouter { client in
            _ = try await client.json(.post, "/v1/signup", ["email": "tpl@example.com", "password": "correct horse battery"])
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: "tpl@example.com", kind: "verification"))
            #expect(mail.subject == "Welcome aboard, code \(mail.code ?? "?")")
            #expect(mail.text.contains("your verification code"))  // the bundled text part still applies
        }
    }
}

@Suite("Code enumeration")
struct CodeEnumerationTests {
    /// Six wrong guesses, answered as (status, code, remaining attempts).
    static func guesses(_ client: some TestClientProtocol, _ path: String, _ body: [String: String]) async throws -> [String] {
        var answers: [String] = []
        for guess in 1...6 {
            var fields = body
            fields["code"] = String(format: "%06d", guess)
            let response = try await client.json(.post, path, fields)
            answers.append(
                "\(response.status.code) \(response.string("code") ?? "-") \(response.object["remaining_attempts"] as? Int ?? -1)")
        }
        return answers
    }

    @Test(
        "Six guesses answer exactly the same whether or not a code (and so an account) exists: recovery, sign-up verification, sign-in codes"
    )
    func sameAnswer() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(id: "verifying", settings: ["methods=password,email_otp"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            // Recovery: a code for the account, none for the stranger (same 202 for both).
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": "nobody@example.com"])
            let recovery = try await Self.guesses(client, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": user.email])
            #expect(
                recovery
                    == (try await Self.guesses(
                        client, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": "nobody@example.com"])))
            #expect(recovery.first == "401 invalid_code 4" && recovery.last == "401 code_expired -1", "\(recovery)")

            // Sign-up on a verifying client: a new address gets a code, a taken one the decoy (no code).
            _ = try await client.json(
                .post, "/v1/signup", ["client_id": "verifying", "email": "fresh@example.com", "password": "correct horse battery"])
            _ = try await client.json(
                .post, "/v1/signup", ["client_id": "verifying", "email": user.email, "password": "correct horse battery"])
            let fresh = try await Self.guesses(client, "/v1/verify", ["client_id": "verifying", "email": "fresh@example.com"])
            #expect(fresh == (try await Self.guesses(client, "/v1/verify", ["client_id": "verifying", "email": user.email])))

            // Sign-in codes: create_user=false sends nothing for an unknown address.
            _ = try await client.json(.post, "/v1/otp", ["client_id": "verifying", "email": user.email, "create_user": false])
            _ = try await client.json(.post, "/v1/otp", ["client_id": "verifying", "email": "stranger@example.com", "create_user": false])
            let otp = try await Self.guesses(client, "/v1/otp/verify", ["client_id": "verifying", "email": user.email])
            #expect(otp == (try await Self.guesses(client, "/v1/otp/verify", ["client_id": "verifying", "email": "stranger@example.com"])))
        }
    }
}

@Suite("Unproved addresses")
struct UnprovedAddressTests {
    @Test(
        "A client without verification signs users in at once, but nothing says the address is proved until a code proves it; a squatter's password then goes",
        arguments: TestDatabase.available)
    func neverAsserted(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.createClient(id: "codes", settings: ["methods=password,email_otp"])
        try await server.withRouter { client in
            let squatter = try await signUp(client, email: "owner@example.com")
            let me = try await client.json(.get, "/v1/me", bearer: squatter.accessToken)
            #expect(me.object["email_verified"] as? Bool == false, "\(me.text)")
            #expect(try decodeClaims(squatter.accessToken)["email_verified"] as? Bool != true)
            // The owner proves the address by code: verified from now on, and the squatter's password no longer works.
            _ = try await client.json(.post, "/v1/otp", ["client_id": "codes", "email": "owner@example.com"])
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "owner@example.com", kind: "otp")?.code)
            let owner = try await client.json(.post, "/v1/otp/verify", ["client_id": "codes", "email": "owner@example.com", "code": code])
            #expect(owner.status == .ok)
            #expect((owner.object["user"] as? [String: Any])?["email_verified"] as? Bool == true)
            let again = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": "owner@example.com", "password": squatter.password])
            #expect(again.status == .unauthorized)
        }
    }
}
