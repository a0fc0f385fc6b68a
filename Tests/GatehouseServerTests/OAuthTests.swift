import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("OAuth endpoints")
struct OAuthTests {
    @Test("Client credentials, introspection and revocation", arguments: TestDatabase.available)
    func confidentialClient(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        let secret = try #require(backend.secret)
        try await server.withRouter { client in
            // Client credentials: Basic and post both work; a wrong secret does not.
            let basic = try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("backend", secret))
            #expect(basic.status == .ok, "\(basic.text)")
            #expect(basic.object["refresh_token"] == nil)
            let post = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "client_id": "backend", "client_secret": secret])
            #expect(post.status == .ok)
            let wrong = try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("backend", secret + "x"))
            #expect(wrong.status == .unauthorized && wrong.string("error") == "invalid_client")
            let publicClient = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "client_id": TestServer.openClient])
            #expect(publicClient.string("error") == "unauthorized_client")
            // A scope the client lacks, or one that needs a user, is refused rather than dropped.
            for scope in ["profile admin", "openid", "offline_access", "email"] {
                let widened = try await client.form(
                    "/oauth/token", ["grant_type": "client_credentials", "scope": scope], basic: ("backend", secret))
                if scope == "email" {
                    #expect(widened.status == .ok && widened.string("scope") == "email", "\(widened.text)")
                } else {
                    #expect(widened.status == .badRequest && widened.string("error") == "invalid_scope", "\(scope): \(widened.text)")
                    #expect(widened.object["access_token"] == nil)
                }
            }

            // Introspection of a user's tokens, then after logout.
            let user = try await signUp(client)
            let active = try await client.form("/oauth/introspect", ["token": user.accessToken], basic: ("backend", secret))
            #expect(active.object["active"] as? Bool == true)
            #expect(active.string("sid") == user.sessionID)
            let activeRefresh = try await client.form("/oauth/introspect", ["token": user.refreshToken], basic: ("backend", secret))
            #expect(activeRefresh.object["active"] as? Bool == true)
            let machine = try await client.form(
                "/oauth/introspect", ["token": try #require(basic.string("access_token"))], basic: ("backend", secret))
            #expect(machine.object["active"] as? Bool == true)
            let junk = try await client.form("/oauth/introspect", ["token": "junk"], basic: ("backend", secret))
            #expect(junk.status == .ok && junk.object["active"] as? Bool == false)
            let unauthenticated = try await client.form(
                "/oauth/introspect", ["token": user.accessToken, "client_id": TestServer.openClient])
            #expect(unauthenticated.object["active"] == nil)
            #expect((400..<500).contains(Int(unauthenticated.status.code)))

            // RFC 7009: revoking the refresh token ends the session at once.
            let revoke = try await client.form("/oauth/revoke", ["token": user.refreshToken, "client_id": TestServer.openClient])
            #expect(revoke.status == .ok)
            let after = try await client.form("/oauth/introspect", ["token": user.accessToken], basic: ("backend", secret))
            #expect(after.object["active"] as? Bool == false)
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .unauthorized)
            #expect(try await client.form("/oauth/revoke", ["token": "unknown", "client_id": TestServer.openClient]).status == .ok)
        }
    }

    @Test("Discovery, JWKS, health, metrics and the OpenAPI document are served")
    func discovery() async throws {
        let server = try await TestServer.start(.sqlite) { $0.metricsToken = "m" }
        try await server.withRouter { client in
            let config = try await client.json(.get, "/.well-known/openid-configuration")
            #expect(config.string("issuer") == "http://127.0.0.1:8080")
            #expect(config.string("jwks_uri") == "http://127.0.0.1:8080/.well-known/jwks.json")
            #expect((config.object["code_challenge_methods_supported"] as? [String]) == ["S256"])
            let jwks = try await client.json(.get, "/.well-known/jwks.json")
            // One key per algorithm, RS256 mandatory (OIDC Core §15.1); every key with its own kid, `use`,
            // and no private member.
            #expect((config.object["id_token_signing_alg_values_supported"] as? [String])?.contains("RS256") == true)
            #expect(
                config.object["backchannel_logout_supported"] as? Bool == true
                    && config.object["claims_parameter_supported"] as? Bool == true)
            let keys = try #require(jwks.object["keys"] as? [[String: Any]])
            #expect(Set(keys.compactMap { $0["alg"] as? String }) == ["RS256", "ES256"] && keys.count == 2)
            #expect(Set(keys.compactMap { $0["kid"] as? String }).count == 2)
            for key in keys {
                #expect(key["use"] as? String == "sig")
                #expect(["d", "p", "q", "dp", "dq", "qi", "k"].allSatisfy { key[$0] == nil }, "\(key)")
            }
            let ec = try #require(keys.first { $0["kty"] as? String == "EC" })
            #expect(ec["alg"] as? String == "ES256" && ec["crv"] as? String == "P-256")
            let rsa = try #require(keys.first { $0["kty"] as? String == "RSA" })
            let modulus = try decodeSegment(try #require(rsa["n"] as? String))
            #expect(rsa["alg"] as? String == "RS256" && modulus.count == 256 && modulus.first != 0)
            #expect(rsa["e"] as? String == "AQAB")
            #expect(try await client.json(.get, "/health/live").status == .ok)
            #expect(try await client.json(.get, "/health/ready").string("status") == "ready")
            let metrics = try await client.json(.get, "/metrics", bearer: "m")
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("hb_requests"))
            let openapi = try await client.json(.get, "/openapi.yaml")
            #expect(openapi.text.hasPrefix("openapi: 3.1"))
        }
    }
}
