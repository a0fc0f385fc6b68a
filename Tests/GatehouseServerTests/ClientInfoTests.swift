import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Terms, required fields, identifier status and client information")
struct ClientInfoTests {
    @Test("Terms: accepted at sign-up, a version bump flips up_to_date, accepting again restores it", arguments: TestDatabase.available)
    func terms(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.createClient(
            id: "terms-app",
            settings: [
                "email_verification=off", "terms_platform_version=1", "terms_platform_url=https://example.com/tos",
                "terms_client_version=a", "terms_client_url=https://app.example.com/terms",
            ])
        try await server.withRouter { client in
            let terms = try await client.json(.get, "/v1/terms?client_id=terms-app")
            #expect((terms.object["platform"] as? [String: Any])?["version"] as? String == "1")
            #expect((terms.object["client"] as? [String: Any])?["url"] as? String == "https://app.example.com/terms")

            let signup = try await client.json(
                .post, "/v1/signup",
                ["client_id": "terms-app", "email": "tess@example.com", "password": "correct horse battery", "accept_terms": true])
            #expect((signup.object["user"] as? [String: Any])?["agreements_up_to_date"] as? Bool == true)
            let access = try #require(signup.string("access_token"))
            let before = try await client.json(.get, "/v1/me/agreements", bearer: access)
            #expect(before.object["up_to_date"] as? Bool == true && before.string("client_version") == "a")

            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock, cache: server.services.clientCache).update(
                id: "terms-app", settings: ["terms_client_version=b"])
            let after = try await client.json(.get, "/v1/me/agreements", bearer: access)
            #expect(after.object["up_to_date"] as? Bool == false)
            let login = try await client.json(
                .post, "/v1/login", ["client_id": "terms-app", "email": "tess@example.com", "password": "correct horse battery"])
            #expect((login.object["user"] as? [String: Any])?["agreements_up_to_date"] as? Bool == false)

            let stale = try await client.json(.post, "/v1/me/agreements", ["platform_version": "1", "client_version": "a"], bearer: access)
            #expect(stale.status == .unprocessableContent)
            #expect(
                try await client.json(.post, "/v1/me/agreements", ["platform_version": "1", "client_version": "b"], bearer: access).status
                    == .noContent)
            #expect(try await client.json(.get, "/v1/me/agreements", bearer: access).object["up_to_date"] as? Bool == true)
            #expect(try await client.json(.post, "/v1/me/agreements", [:], bearer: access).status == .unprocessableContent)

            // A client without terms: an empty acceptance records nothing, so it is refused.
            let plain = try await signUp(client)
            let empty = try await client.json(.post, "/v1/me/agreements", [:], bearer: plain.accessToken)
            #expect(empty.status == .unprocessableContent && empty.string("code") == "validation_failed", "\(empty.text)")
        }
    }

    @Test("Required fields: listed for the client, missing ones in the token response, validated on PATCH")
    func requiredFields() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: "fields-app", settings: ["email_verification=off", "required_fields=given_name,birthdate"])
        try await server.withRouter { client in
            let listed = try await client.json(.get, "/v1/required-fields", headers: [HTTPField.Name("Gatehouse-Client")!: "fields-app"])
            #expect(listed.object["required_fields"] as? [String] == ["given_name", "birthdate"])
            let signup = try await client.json(
                .post, "/v1/signup", ["client_id": "fields-app", "email": "fred@example.com", "password": "correct horse battery"])
            #expect((signup.object["user"] as? [String: Any])?["missing_required_fields"] as? [String] == ["given_name", "birthdate"])
            let access = try #require(signup.string("access_token"))
            let bad = try await client.json(
                .patch, "/v1/me", ["profile": ["given_name": String(repeating: "x", count: 300), "birthdate": "2031-13-01"]], bearer: access
            )
            #expect(bad.status == .unprocessableContent)
            let fields = Set(((bad.object["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String })
            #expect(fields == ["profile.given_name", "profile.birthdate"])
            _ = try await client.json(.patch, "/v1/me", ["profile": ["given_name": "Fred"]], bearer: access)
            #expect(
                try await client.json(.get, "/v1/me/required-fields", bearer: access).object["required_fields"] as? [String] == [
                    "birthdate"
                ])
            _ = try await client.json(.patch, "/v1/me", ["profile": ["birthdate": "1990-05-17"]], bearer: access)
            #expect(try await client.json(.get, "/v1/me/required-fields", bearer: access).object["required_fields"] as? [String] == [])
        }
    }

    @Test("Identifier status: off by default, truthful when on, rate limited per IP")
    func identifierStatus() async throws {
        let server = try await TestServer.start(.sqlite) { $0.identifierStatusPerMinute = 2 }
        try await server.createClient(id: "status-app", settings: ["email_verification=off", "identifier_status=on"])
        try await server.withRouter { client in
            let off = try await client.json(.get, "/v1/identifiers/status?email=a@example.com")
            #expect(off.status == .notFound && off.string("code") == "not_enabled")
            _ = try await client.json(
                .post, "/v1/signup", ["client_id": "status-app", "email": "known@example.com", "password": "correct horse battery"])
            let known = try await client.json(.get, "/v1/identifiers/status?client_id=status-app&email=Known@example.com")
            // Signed up on a client that does not verify: the address is not proved.
            #expect(
                known.object["exists"] as? Bool == true && known.object["verified"] as? Bool == false
                    && known.object["has_password"] as? Bool == true)
            let unknown = try await client.json(.get, "/v1/identifiers/status?client_id=status-app&phone=%2B4790000000")
            #expect(unknown.object["exists"] as? Bool == false)
            let limited = try await client.json(.get, "/v1/identifiers/status?client_id=status-app&email=x@example.com")
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
        }
    }

    @Test("Client information, and scopes: the granted subset, an ID token with the nonce for openid")
    func clientAndScopes() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let info = try await client.json(.get, "/v1/client?client_id=\(TestServer.openClient)")
            #expect(info.string("client_id") == TestServer.openClient)
            #expect(info.object["methods"] as? [String] == ["password"])
            #expect(info.object["social_providers"] as? [String] == [])
            #expect((info.object["password_policy"] as? [String: Any])?["min_length"] as? Int == 10)

            let user = try await signUp(client)
            let login = try await client.json(
                .post, "/v1/login",
                [
                    "client_id": TestServer.openClient, "email": user.email, "password": user.password, "scope": "openid email admin",
                    "nonce": "n-0S6_WzA2Mj",
                ])
            #expect(login.string("scope") == "openid email")
            let id = try decodeClaims(try #require(login.string("id_token")))
            #expect(id["nonce"] as? String == "n-0S6_WzA2Mj")
            #expect(id["aud"] as? String == TestServer.openClient)
            #expect(id["iss"] as? String == "http://127.0.0.1:8080")
            let plain = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password, "scope": "email"])
            #expect(plain.object["id_token"] == nil)
        }
    }
}
