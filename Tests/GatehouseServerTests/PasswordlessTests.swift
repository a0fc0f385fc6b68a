import Foundation
import GatehouseServer
import Logging
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@Suite("Passwordless codes")
struct PasswordlessTests {
    static let client = "codes-app"

    static func start(_ database: TestDatabase = .sqlite) async throws -> TestServer {
        let server = try await TestServer.start(database)
        try await server.createClient(id: client, settings: ["methods=password,email_otp,sms_otp"])
        return server
    }

    @Test("Email code: masked answer, is_new true then false for the same address", arguments: TestDatabase.available)
    func emailCode(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let sent = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": "Otto@Example.com"])
            #expect(sent.status == .accepted)
            #expect(sent.string("sent_to") == "o***@example.com")
            #expect(sent.object["expires_in"] as? Int == 600 && sent.object["resend_after"] as? Int == 60)
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "otto@example.com", kind: "otp")?.code)
            let first = try await client.json(
                .post, "/v1/otp/verify", ["client_id": Self.client, "email": "otto@example.com", "code": code])
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.object["is_new"] as? Bool == true)
            #expect(try decodeClaims(try #require(first.string("access_token")))["amr"] as? [String] == ["otp"])
            #expect((first.object["user"] as? [String: Any])?["email_verified"] as? Bool == true)  // proved by the code

            server.clock.advance(by: 61)
            _ = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": "otto@example.com"])
            try await server.deliverMail()
            let again = try #require(server.lastMail(to: "otto@example.com", kind: "otp")?.code)
            let second = try await client.json(
                .post, "/v1/otp/verify", ["client_id": Self.client, "email": "otto@example.com", "code": again])
            #expect(second.object["is_new"] as? Bool == false)
            #expect(
                (second.object["user"] as? [String: Any])?["id"] as? String == (first.object["user"] as? [String: Any])?["id"] as? String)
        }
    }

    @Test("Brute force is capped: 5 tries per code, a new send kills the old code, 10 sends an hour", arguments: TestDatabase.available)
    func bruteForce(database: TestDatabase) async throws {
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let email = "brute@example.com"
            _ = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email])
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: email, kind: "otp")?.code)
            let wrong = code == "123456" ? "654321" : "123456"
            for remaining in (0..<5).reversed() {
                let attempt = try await client.json(.post, "/v1/otp/verify", ["client_id": Self.client, "email": email, "code": wrong])
                #expect(attempt.string("code") == "invalid_code")
                #expect(attempt.object["remaining_attempts"] as? Int == remaining)
            }
            let right = try await client.json(.post, "/v1/otp/verify", ["client_id": Self.client, "email": email, "code": code])
            #expect(right.status == .unauthorized && right.string("code") == "code_expired")

            // Cool-down between sends.
            server.clock.advance(by: 61)
            #expect(try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email]).status == .accepted)
            let tooSoon = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email])
            #expect(tooSoon.status == .tooManyRequests && tooSoon.headers[.retryAfter] != nil)
            try await server.deliverMail()
            let old = try #require(server.lastMail(to: email, kind: "otp")?.code)
            server.clock.advance(by: 61)
            _ = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email])
            try await server.deliverMail()
            let new = try #require(server.lastMail(to: email, kind: "otp")?.code)
            if old != new {
                let stale = try await client.json(.post, "/v1/otp/verify", ["client_id": Self.client, "email": email, "code": old])
                #expect(stale.status == .unauthorized)
            }
            #expect(try await client.json(.post, "/v1/otp/verify", ["client_id": Self.client, "email": email, "code": new]).status == .ok)

            // The hourly cap: 3 sends so far; 7 more are allowed, the 11th is refused.
            for _ in 0..<7 {
                server.clock.advance(by: 61)
                #expect(try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email]).status == .accepted)
            }
            server.clock.advance(by: 61)
            let capped = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email])
            #expect(capped.status == .tooManyRequests)
            #expect((capped.headers[.retryAfter].flatMap(Int.init) ?? 0) > 60)
        }
    }

    @Test("create_user=false: an unknown address gets the same 202 and no message; a disabled method is refused")
    func noEnumeration() async throws {
        let server = try await Self.start()
        try await server.withRouter { client in
            let unknown = try await client.json(
                .post, "/v1/otp", ["client_id": Self.client, "email": "nobody@example.com", "create_user": false])
            #expect(unknown.status == .accepted)
            #expect(Set(unknown.object.keys) == ["sent_to", "expires_in", "resend_after"])
            try await server.deliverMail()
            #expect(server.mail.messages.isEmpty)
            let disabled = try await client.json(.post, "/v1/otp", ["email": "a@example.com"])  // default client: password only
            #expect(disabled.status == .forbidden && disabled.string("code") == "not_enabled")
            let both = try await client.json(
                .post, "/v1/otp", ["client_id": Self.client, "email": "a@example.com", "phone": "+4790000000"])
            #expect(both.status == .unprocessableContent)
            for bad in ["90000000", "+0123456789", "+47 900", "+47abc12345", "+1234567890123456"] {
                let response = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "phone": bad])
                #expect(response.status == .unprocessableContent, "\(bad)")
                #expect((response.object["errors"] as? [[String: Any]])?.first?["field"] as? String == "phone")
            }
        }
    }

    @Test("SMS codes go to the HTTP gateway with its credentials, and a failed post is retried")
    func smsGateway() async throws {
        // A gateway on a real socket that refuses the first post with 503.
        let refused = Mutex(false)
        let sink = try await HookServer.start { _ in
            refused.withLock { done in
                defer { done = true }
                return done ? .init(status: 200, body: "{}") : .init(status: 503, body: "{}")
            }
        }
        var configuration = ServerConfiguration()
        configuration.smsURL = "http://secret-token@127.0.0.1:\(sink.port)/sms"
        let transports = try GatehouseServer.transports(configuration, logger: Logger(label: "test"))
        let server = try await TestServer.start(.sqlite, transports: transports)
        try await server.createClient(id: Self.client, settings: ["methods=sms_otp"])
        do {
            try await server.withRouter { client in
                let sent = try await client.json(.post, "/v1/otp", ["client_id": Self.client, "phone": "+47 900 12 345"])
                #expect(sent.string("sent_to") == "+47*****345")
                try await server.deliverMail()
                #expect(await sink.requests(to: "/sms").count == 1)
                server.clock.advance(by: 30)
                try await server.deliverMail()
                let posts = await sink.requests(to: "/sms")
                #expect(posts.count == 2)
                let post = try #require(posts.last)
                let message = post.json
                #expect(message["to"] as? String == "+4790012345")
                #expect(post.headers["authorization"] == "Bearer secret-token")
                let body = try #require(message["body"] as? String)
                #expect(body.utf8.count <= 160 && body.contains("min"))
                let code = try #require(body.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init))
                let verified = try await client.json(
                    .post, "/v1/otp/verify", ["client_id": Self.client, "phone": "+4790012345", "code": code])
                #expect(verified.object["is_new"] as? Bool == true)
                let user = try #require(verified.object["user"] as? [String: Any])
                #expect(user["phone"] as? String == "+4790012345" && user["phone_verified"] as? Bool == true)
                #expect(try decodeClaims(try #require(verified.string("access_token")))["amr"] as? [String] == ["sms"])
            }
        } catch {
            await sink.stop()
            throw error
        }
        await sink.stop()
    }
}

@Suite("Account squatting")
struct SquattingTests {
    @Test("Proving an address by code removes the password of whoever registered it unverified")
    func squatterLosesPassword() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: PasswordlessTests.client, settings: ["methods=password,email_otp"])
        try await server.withRouter { client in
            // A squatter signs up with the victim's address and their own password; never verifies.
            _ = try await client.json(
                .post, "/v1/signup",
                ["client_id": PasswordlessTests.client, "email": "victim@example.com", "password": "squatter password"])
            // The victim signs in by email code.
            _ = try await client.json(.post, "/v1/otp", ["client_id": PasswordlessTests.client, "email": "victim@example.com"])
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "victim@example.com", kind: "otp")?.code)
            let victim = try await client.json(
                .post, "/v1/otp/verify", ["client_id": PasswordlessTests.client, "email": "victim@example.com", "code": code])
            #expect(victim.status == .ok)
            #expect((victim.object["user"] as? [String: Any])?["has_password"] as? Bool == false)
            let squatter = try await client.json(
                .post, "/v1/login", ["client_id": PasswordlessTests.client, "email": "victim@example.com", "password": "squatter password"])
            #expect(squatter.status == .unauthorized)
        }
    }
}
