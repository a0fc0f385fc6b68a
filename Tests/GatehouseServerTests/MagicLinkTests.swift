import Foundation
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Magic links")
struct MagicLinkTests {
    static let client = "links-app"
    static let redirect = "com.example.links:/signed-in"

    static func start(_ database: TestDatabase = .sqlite) async throws -> TestServer {
        let server = try await TestServer.start(database)
        try await server.createClient(
            id: client, redirectURIs: [redirect], settings: ["methods=password,email_otp", "email_verification=off"])
        return server
    }

    static func ask(
        _ client: some TestClientProtocol, _ email: String, challenge: String?, redirect: String? = redirect, createUser: Bool = true
    ) async throws -> TestResponse {
        var body: [String: any Sendable] = ["client_id": Self.client, "email": email, "create_user": createUser]
        if let challenge { body["code_challenge"] = challenge }
        if let redirect { body["redirect_to"] = redirect }
        return try await client.json(.post, "/v1/magic-link", body)
    }

    static func exchange(_ client: some TestClientProtocol, code: String, verifier: String?) async throws -> TestResponse {
        var fields = ["grant_type": "authorization_code", "code": code, "client_id": Self.client, "redirect_uri": redirect]
        if let verifier { fields["code_verifier"] = verifier }
        return try await client.form("/oauth/token", fields)
    }

    static func token(in path: String) throws -> String {
        try #require(URLComponents(string: path)?.queryItems?.first { $0.name == "token" }?.value)
    }

    @Test(
        "ML-1 The app that asked signs in with the link once (not with a wrong verifier); the code in the same mail then fails",
        arguments: TestDatabase.available)
    func inTheApp(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let (verifier, challenge) = VerificationTests.pkce()
            let sent = try await Self.ask(client, "Mia@Example.com", challenge: challenge)
            #expect(sent.status == .accepted && sent.string("sent_to") == "m***@example.com", "\(sent.text)")
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: "mia@example.com", kind: "magic_link"))
            let token = try Self.token(in: try #require(mail.linkPath("/magic-link?token=")))

            // Another device has the link but not the verifier: nothing, and the link stays for the app.
            let stranger = try await client.json(
                .post, "/v1/magic-link/verify",
                ["client_id": Self.client, "token": token, "code_verifier": String(repeating: "y", count: 43)])
            #expect(stranger.status == .unauthorized && stranger.string("code") == "code_expired")

            let signedIn = try await client.json(
                .post, "/v1/magic-link/verify", ["client_id": Self.client, "token": token, "code_verifier": verifier])
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            #expect(signedIn.object["is_new"] as? Bool == true)
            #expect((signedIn.object["user"] as? [String: Any])?["email_verified"] as? Bool == true)
            #expect(try decodeClaims(try #require(signedIn.string("access_token")))["amr"] as? [String] == ["otp"])

            let again = try await client.json(
                .post, "/v1/magic-link/verify", ["client_id": Self.client, "token": token, "code_verifier": verifier])
            #expect(again.status == .unauthorized && again.string("code") == "code_expired")
            // Either works once: the code beside the used link is dead.
            let code = try await client.json(
                .post, "/v1/otp/verify", ["client_id": Self.client, "email": "mia@example.com", "code": try #require(mail.code)])
            #expect(code.status == .unauthorized)
            #expect(try await client.json(.get, "/magic-link?token=\(token)").status == .gone)
        }
    }

    @Test(
        "ML-2 In a browser: the page asks first; the redirect's code needs the app's verifier, so another browser gets no session",
        arguments: TestDatabase.available)
    func inABrowser(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            _ = try await signUp(client, email: "ola@example.com", password: "correct horse battery", clientID: Self.client)
            let (verifier, challenge) = VerificationTests.pkce()
            #expect(try await Self.ask(client, "ola@example.com", challenge: challenge).status == .accepted)
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: "ola@example.com", kind: "magic_link")?.linkPath("/magic-link?token="))

            // A mail scanner's GET uses nothing.
            let scanned = try await client.json(.get, path)
            #expect(scanned.status == .ok && scanned.text.contains("<form method=\"post\" action=\"/magic-link\">"))
            #expect(scanned.text.contains(Self.client))
            // Opened in another browser: a redirect to the app with a code only the verifier redeems.
            let followed = try await confirmLink(client, path, action: "/magic-link")
            #expect(followed.status == .seeOther)
            let location = try #require(followed.headers[.location])
            #expect(location.hasPrefix(Self.redirect + "?code="))
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            #expect(try await Self.exchange(client, code: code, verifier: nil).string("error") == "invalid_grant")
            // The link was used there: a second use is refused on the page and in the app.
            #expect(try await client.json(.get, path).status == .gone)
            let second = try await client.json(
                .post, "/v1/magic-link/verify", ["client_id": Self.client, "token": try Self.token(in: path), "code_verifier": verifier])
            #expect(second.string("code") == "code_expired")

            // The next link, opened on the device that asked: the app redeems the code with its verifier.
            server.clock.advance(by: 61)
            let (verifier2, challenge2) = VerificationTests.pkce()
            #expect(try await Self.ask(client, "ola@example.com", challenge: challenge2).status == .accepted)
            try await server.deliverMail()
            let path2 = try #require(server.lastMail(to: "ola@example.com", kind: "magic_link")?.linkPath("/magic-link?token="))
            let location2 = try #require(try await confirmLink(client, path2, action: "/magic-link").headers[.location])
            let code2 = try #require(URLComponents(string: location2)?.queryItems?.first { $0.name == "code" }?.value)
            let tokens = try await Self.exchange(client, code: code2, verifier: verifier2)
            #expect(tokens.status == .ok, "\(tokens.text)")
            let me = try await client.json(.get, "/v1/me", bearer: tokens.string("access_token"))
            #expect(me.string("email") == "ola@example.com")
        }
    }

    @Test("ML-3 An expired link is refused on the page and in the app; a link without a redirect only works in the app")
    func expiry() async throws {
        let server = try await Self.start()
        try await server.withRouter { client in
            let (verifier, challenge) = VerificationTests.pkce()
            _ = try await Self.ask(client, "late@example.com", challenge: challenge)
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: "late@example.com", kind: "magic_link")?.linkPath("/magic-link?token="))
            server.clock.advance(by: 10 * 60 + 1)
            #expect(try await client.json(.get, path).status == .gone)
            let late = try await client.json(
                .post, "/v1/magic-link/verify", ["client_id": Self.client, "token": try Self.token(in: path), "code_verifier": verifier])
            #expect(late.string("code") == "code_expired")

            let (verifier2, challenge2) = VerificationTests.pkce()
            #expect(try await Self.ask(client, "late@example.com", challenge: challenge2, redirect: nil).status == .accepted)
            try await server.deliverMail()
            let path2 = try #require(server.lastMail(to: "late@example.com", kind: "magic_link")?.linkPath("/magic-link?token="))
            let page = try await confirmLink(client, path2, action: "/magic-link")
            #expect(page.status == .ok && page.text.contains("Open this link in the app"))
            let inApp = try await client.json(
                .post, "/v1/magic-link/verify", ["client_id": Self.client, "token": try Self.token(in: path2), "code_verifier": verifier2])
            #expect(inApp.status == .ok, "\(inApp.text)")
        }
    }

    @Test("ML-4 The same answer for known and unknown addresses; a challenge is required; sends are cooled down")
    func rules() async throws {
        let server = try await Self.start()
        try await server.withRouter { client in
            _ = try await signUp(client, email: "known@example.com", password: "correct horse battery", clientID: Self.client)
            let (_, challenge) = VerificationTests.pkce()
            let known = try await Self.ask(client, "known@example.com", challenge: challenge, createUser: false)
            let unknown = try await Self.ask(client, "nobody@example.com", challenge: challenge, createUser: false)
            #expect(known.status == .accepted && unknown.status == .accepted)
            #expect(Set(known.object.keys) == Set(unknown.object.keys))
            try await server.deliverMail()
            #expect(server.lastMail(to: "known@example.com", kind: "magic_link") != nil)
            #expect(server.lastMail(to: "nobody@example.com", kind: "magic_link") == nil)

            let soon = try await Self.ask(client, "known@example.com", challenge: challenge)
            #expect(soon.status == .tooManyRequests && soon.headers[.retryAfter] != nil)
            let unbound = try await Self.ask(client, "other@example.com", challenge: nil)
            #expect(unbound.status == .unprocessableContent && unbound.text.contains("code_challenge"))
            let elsewhere = try await Self.ask(client, "other@example.com", challenge: challenge, redirect: "https://evil.example/cb")
            #expect(elsewhere.status == .unprocessableContent && elsewhere.text.contains("redirect_to"))
            let garbage = try await client.json(
                .post, "/v1/magic-link/verify",
                ["client_id": Self.client, "token": String(repeating: "z", count: 300), "code_verifier": "v"])
            #expect(garbage.status == .unauthorized)
        }
    }
}
