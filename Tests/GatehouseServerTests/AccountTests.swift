import Argon2
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdBcrypt
import HummingbirdTesting
import Testing

@Suite("Sign-up and login")
struct AccountTests {
    @Test("Sign-up without verification signs in; the token carries the RFC 9068 claims", arguments: TestDatabase.available)
    func signupSignsIn(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let response = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": TestServer.openClient, "email": "  Ada@Example.COM ", "password": "correct horse battery",
                    "profile": ["given_name": "Ada", "locale": "en-GB"],
                ])
            #expect(response.status == .created)
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.object["is_new"] as? Bool == true)
            #expect(response.string("token_type") == "Bearer")
            let user = try #require(response.object["user"] as? [String: Any])
            #expect(user["email"] as? String == "ada@example.com")
            let id = try #require(user["id"] as? String)
            #expect(id == id.lowercased())
            let claims = try decodeClaims(try #require(response.string("access_token")))
            for claim in ["iss", "sub", "aud", "exp", "iat", "jti", "client_id", "scope", "sid", "amr"] {
                #expect(claims[claim] != nil, "missing \(claim)")
            }
            #expect(claims["sub"] as? String == id)
            #expect(claims["exp"] is Int && claims["iat"] is Int)
            #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 900)
            #expect(claims["amr"] as? [String] == ["pwd"])
            #expect(claims["client_id"] as? String == TestServer.openClient)

            let me = try await client.json(.get, "/v1/me", bearer: response.string("access_token"))
            #expect(me.status == .ok)
            #expect((me.object["profile"] as? [String: Any])?["given_name"] as? String == "Ada")
        }
    }

    @Test(
        "Sign-up on a verifying client answers verification_required and stores a hashed code and a sealed mail",
        arguments: TestDatabase.available)
    func signupRequiresVerification(database: TestDatabase) async throws {
        let server = try await TestServer.start(database)
        try await server.withRouter { client in
            let response = try await client.json(.post, "/v1/signup", ["email": "bob@example.com", "password": "correct horse battery"])
            #expect(response.status == .created)
            #expect(response.object["verification_required"] as? Bool == true)
            #expect(response.object["access_token"] == nil)

            let outbox = try await server.persistence.read { try await $0.outbox.list(status: .pending, limit: 10) }
            #expect(outbox.count == 1)
            #expect(outbox.first?.kind == "verification")
            #expect(outbox.first?.recipient == "bob@example.com")
            let sealed = try #require(outbox.first?.sealedPayload)
            let payload = try JSONDecoder().decode([String: String].self, from: try server.services.secret.open(sealed))
            let code = try #require(payload["code"])
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            #expect(!sealed.contains(code))
            let stored = try await server.persistence.read {
                try await $0.codes.findOpen(purpose: .verifyEmail, identifier: "bob@example.com", clientID: server.defaultClientID)
            }
            #expect(stored?.codeHash != nil && stored?.codeHash != code)

            let login = try await client.json(.post, "/v1/login", ["email": "bob@example.com", "password": "correct horse battery"])
            #expect(login.status == .forbidden)
            #expect(login.string("code") == "email_not_verified")
        }
    }

    @Test("A taken address: the same 201 and a notice with enumeration protection; 409 without it")
    func duplicateSignup() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: "no-protection", settings: ["enumeration_protection=off"])
        try await server.withRouter { client in
            let body: [String: any Sendable] = ["email": "carol@example.com", "password": "correct horse battery"]
            let first = try await client.json(.post, "/v1/signup", body)
            let second = try await client.json(.post, "/v1/signup", body)
            #expect(first.status == .created && second.status == .created)
            #expect(Set(first.object.keys) == Set(second.object.keys))
            let kinds = try await server.persistence.read { try await $0.outbox.list(status: nil, limit: 10) }.map(\.kind)
            #expect(kinds.sorted() == ["signup_notice", "verification"])

            var unprotected = body
            unprotected["client_id"] = "no-protection"
            let third = try await client.json(.post, "/v1/signup", unprotected)
            #expect(third.status == .conflict)
            #expect(third.string("code") == "already_registered")
        }
    }

    @Test("Sign-up validation names the fields")
    func signupValidation() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let response = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": TestServer.openClient, "email": "not-an-email", "password": "short",
                    "profile": ["birthdate": "2999-01-01", "picture": "http://insecure.example/p.png", "locale": "not a tag"],
                ])
            #expect(response.status == .unprocessableContent)
            #expect(response.headers[.contentType] == "application/problem+json")
            let fields = Set(((response.object["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String })
            #expect(fields == ["email", "password", "profile.birthdate", "profile.picture", "profile.locale"])

            let same = try await client.json(
                .post, "/v1/signup", ["client_id": TestServer.openClient, "email": "dave@example.com", "password": "DAVE@example.com"])
            #expect(same.status == .unprocessableContent)
            #expect((same.object["errors"] as? [[String: Any]])?.first?["code"] as? String == "same_as_email")

            let long = try await client.json(
                .post, "/v1/signup",
                ["client_id": TestServer.openClient, "email": "erin@example.com", "password": String(repeating: "é", count: 600)])
            #expect((long.object["errors"] as? [[String: Any]])?.first?["code"] as? String == "too_long")

            let redirect = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": TestServer.openClient, "email": "fay@example.com", "password": "correct horse battery",
                    "redirect_to": "https://evil.example/cb",
                ])
            #expect(redirect.status == .unprocessableContent)

            let unknownClient = try await client.json(
                .post, "/v1/signup", ["client_id": "nope", "email": "gus@example.com", "password": "correct horse battery"])
            #expect(unknownClient.status == .badRequest)
            #expect(unknownClient.string("code") == "invalid_client")
        }
    }

    @Test("Wrong password and unknown email get the same 401", arguments: TestDatabase.available)
    func invalidCredentials(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let wrong = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": "wrong password!"])
            let unknown = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": "nobody@example.com", "password": "wrong password!"])
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
            #expect(wrong.text == unknown.text)
            #expect(wrong.string("code") == "invalid_credentials")
            let upper = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email.uppercased(), "password": user.password])
            #expect(upper.status == .ok)
        }
    }

    @Test("Repeated wrong passwords lead to 429 with Retry-After, shared through the database", arguments: TestDatabase.available)
    func lockout(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database) { $0.maxFailuresPerAccount = 5 }
        try await server.withRouter { client in
            let user = try await signUp(client)
            for _ in 0..<5 {
                let response = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": "wrong password!"])
                #expect(response.status == .unauthorized)
            }
            let locked = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            #expect(locked.status == .tooManyRequests)
            let retryAfter = try #require(locked.headers[.retryAfter].flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 15 * 60)
            #expect(locked.string("code") == "rate_limited")

            server.clock.advance(by: 15 * 60 + 1)
            let later = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            #expect(later.status == .ok)
        }
    }

    @Test("Imported bcrypt hashes and older Argon2 parameters verify and are upgraded on login")
    func rehashOnLogin() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let record = try #require(try await server.persistence.read { try await $0.users.find(email: user.email.lowercased()) })
            let legacy = Bcrypt.hash(user.password, cost: 4)
            #expect(legacy.hasPrefix("$2b$"))
            let password = server.services.password
            try await server.persistence.transaction {
                try await password.setPassword(hash: legacy, for: record, now: Date(), stores: $0)
            }
            #expect(try await storedHash(server, email: record.email!) == legacy)
            _ = try await logIn(client, email: user.email, password: user.password)
            #expect(try await storedHash(server, email: record.email!).hasPrefix("$argon2id$v=19$m=256,t=1,p=1$"))

            // An Argon2 hash with other parameters is replaced by one with the configured ones.
            let older = try Argon2.hashPHC(
                password: user.password, parameters: Argon2Parameters(memoryKiB: 128, iterations: 2, parallelism: 1))
            try await server.persistence.transaction {
                try await password.setPassword(hash: older, for: record, now: Date(), stores: $0)
            }
            _ = try await logIn(client, email: user.email, password: user.password)
            let again = try await storedHash(server, email: record.email!)
            #expect(again.hasPrefix("$argon2id$v=19$m=256,t=1,p=1$"))
            #expect(again != older)
        }
    }
}

/// The password hash stored for the credential that answers to `email`.
private func storedHash(_ server: TestServer, email: String) async throws -> String {
    let credential = try #require(try await server.persistence.read { try await $0.credentials.find(type: .password, identifier: email) })
    let config = try #require(try JSONSerialization.jsonObject(with: Data(credential.config.utf8)) as? [String: Any])
    return try #require(config["hashed_password"] as? String)
}
