import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// RFC 8693 token exchange: a service trades a user's token for a narrower one for a downstream
/// service; an operator's service impersonates a user with `act`; each only where the operator allowed
/// it, and each audited.
@Suite("Token exchange")
struct TokenExchangeTests {
    static let billing = "https://billing.example"
    static let grant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessType = "urn:ietf:params:oauth:token-type:access_token"
    static let userType = "urn:gatehouse:params:oauth:token-type:user-id"

    @Test(
        "TX-1: a service exchanges a user's access token for one for a downstream service alone: audience and scope narrowed, same user and session, no refresh token; a wider scope, a foreign audience, a client without token_exchange and a public client are refused; the new token is not for Gatehouse's own API; introspection shows it until the user's session ends; exchanges and refusals audited",
        arguments: TestDatabase.available)
    func delegation(_ database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        let orders = try await server.createClient(
            id: "orders", kind: .confidential, settings: ["audiences=\(Self.billing)", "token_exchange=on"])
        let plain = try await server.createClient(id: "plain", kind: .confidential, settings: ["audiences=\(Self.billing)"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            func exchange(_ fields: [String: String], as credentials: (String, String)) async throws -> TestResponse {
                try await client.form(
                    "/oauth/token",
                    ["grant_type": Self.grant, "subject_token": user.accessToken, "subject_token_type": Self.accessType].merging(fields) {
                        $1
                    },
                    basic: credentials)
            }
            let answer = try await exchange(["audience": Self.billing, "scope": "email"], as: ("orders", orders.secret ?? ""))
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.string("issued_token_type") == Self.accessType)
            #expect(answer.string("token_type") == "Bearer")
            #expect(answer.string("scope") == "email")
            #expect(answer.object["refresh_token"] == nil)
            let token = try #require(answer.string("access_token"))
            let claims = try decodeClaims(token)
            #expect(claims["aud"] as? String == Self.billing)
            #expect(claims["scope"] as? String == "email")
            #expect(claims["client_id"] as? String == "orders")
            #expect(claims["sub"] as? String == (try decodeClaims(user.accessToken)["sub"] as? String))
            #expect(claims["sid"] as? String == user.sessionID)
            #expect(claims["act"] == nil)

            #expect(
                try await exchange(["audience": Self.billing, "scope": "email phone"], as: ("orders", orders.secret ?? "")).string("error")
                    == "invalid_scope")
            #expect(
                try await exchange(["audience": "https://elsewhere.example"], as: ("orders", orders.secret ?? "")).string("error")
                    == "invalid_target")
            #expect(
                try await exchange(["audience": Self.billing], as: ("plain", plain.secret ?? "")).string("error") == "unauthorized_client")
            let publicTry = try await client.form(
                "/oauth/token",
                [
                    "grant_type": Self.grant, "subject_token": user.accessToken, "subject_token_type": Self.accessType,
                    "audience": Self.billing, "client_id": TestServer.openClient,
                ])
            #expect(publicTry.string("error") == "unauthorized_client", "\(publicTry.text)")

            // Not a token for Gatehouse's own API.
            #expect(try await client.json(.get, "/v1/me", bearer: token).status == .unauthorized)
            // The downstream service asks introspection; the user's logout ends the exchanged token too.
            let seen = try await client.form("/oauth/introspect", ["token": token], basic: ("orders", orders.secret ?? ""))
            #expect(seen.object["active"] as? Bool == true)
            #expect(seen.string("aud") == Self.billing)
            #expect(try await client.json(.post, "/v1/logout", [:], bearer: user.accessToken).status.code < 300)
            let after = try await client.form("/oauth/introspect", ["token": token], basic: ("orders", orders.secret ?? ""))
            #expect(after.object["active"] as? Bool == false)
            #expect(
                try await exchange(["audience": Self.billing], as: ("orders", orders.secret ?? "")).string("error") == "invalid_grant")

            let events = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.tokenExchanged)) }
            #expect(events.count == 1)
            #expect(events.first?.clientID == "orders")
            // Each refusal to an authenticated client, with its code and the audience it asked for.
            let refused = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(type: AuditEvent.tokenExchangeRefused))
            }
            let seenRefusals = refused.map { "\($0.clientID ?? "-") \($0.reason ?? "")" }.sorted()
            #expect(
                seenRefusals
                    == [
                        "\(TestServer.openClient) unauthorized_client for \(Self.billing)", "orders invalid_grant for \(Self.billing)",
                        "orders invalid_scope for \(Self.billing)", "orders invalid_target for https://elsewhere.example",
                        "plain unauthorized_client for \(Self.billing)",
                    ].sorted(), "\(seenRefusals)")
        }
    }

    @Test(
        "TX-3: a DPoP-bound subject token is exchanged only with the service's own proof, and the new token is bound to the service's key, never a bearer token"
    )
    func boundSubject() async throws {
        guard await IndependentDPoP.isAvailable() else {
            print("skipped: pip install pyjwt cryptography to run TX-3 with independently made proofs")
            return
        }
        let server = try await TestServer.startOpen(.sqlite)
        let orders = try await server.createClient(
            id: "orders", kind: .confidential, settings: ["audiences=\(Self.billing)", "token_exchange=on"])
        let base = "http://127.0.0.1:8080"
        let now = Int(server.clock.now().timeIntervalSince1970)
        let device = FileManager.default.temporaryDirectory.appendingPathComponent("gh-tx-device-\(UUID()).pem").path
        let service = FileManager.default.temporaryDirectory.appendingPathComponent("gh-tx-service-\(UUID()).pem").path
        try await server.withRouter { client in
            let signup = try await IndependentDPoP.proof(.init(key: device, htm: "POST", htu: base + "/v1/signup", iat: now))
            let answer = try await client.json(
                .post, "/v1/signup",
                ["client_id": TestServer.openClient, "email": "bound-tx@example.com", "password": "correct horse battery"],
                headers: [DPoP.proof: signup.proof])
            let bound = try #require(answer.string("access_token"))
            let fields = [
                "grant_type": Self.grant, "subject_token": bound, "subject_token_type": Self.accessType, "audience": Self.billing,
            ]
            let bare = try await DPoPTests.token(client, fields, proof: nil, basic: ("orders", orders.secret ?? ""))
            #expect(bare.status == .badRequest)
            #expect(bare.string("error") == "invalid_dpop_proof", "\(bare.text)")
            let proof = try await IndependentDPoP.proof(.init(key: service, htm: "POST", htu: base + "/oauth/token", iat: now))
            let exchanged = try await DPoPTests.token(client, fields, proof: proof.proof, basic: ("orders", orders.secret ?? ""))
            #expect(exchanged.status == .ok, "\(exchanged.text)")
            #expect(exchanged.string("token_type") == "DPoP")
            let claims = try decodeClaims(try #require(exchanged.string("access_token")))
            #expect((claims["cnf"] as? [String: String]) == ["jkt": proof.jkt])
        }
    }

    @Test(
        "TX-2: impersonation: a client with token_exchange=impersonation gets a five-minute token for a user by id, with act naming it, for its downstream service alone, audited as admin.user.impersonated; a client allowed only delegation, an unknown user and a malformed id are refused"
    )
    func impersonation() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let support = try await server.createClient(
            id: "support", kind: .confidential, settings: ["audiences=\(Self.billing)", "token_exchange=impersonation"])
        let orders = try await server.createClient(
            id: "orders", kind: .confidential, settings: ["audiences=\(Self.billing)", "token_exchange=on"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            func impersonate(_ subject: String, as credentials: (String, String)) async throws -> TestResponse {
                try await client.form(
                    "/oauth/token",
                    ["grant_type": Self.grant, "subject_token": subject, "subject_token_type": Self.userType, "audience": Self.billing],
                    basic: credentials)
            }
            let answer = try await impersonate(userID, as: ("support", support.secret ?? ""))
            #expect(answer.status == .ok, "\(answer.text)")
            #expect((answer.object["expires_in"] as? Int ?? 0) <= 300)
            let claims = try decodeClaims(try #require(answer.string("access_token")))
            #expect(claims["sub"] as? String == userID)
            #expect((claims["act"] as? [String: String]) == ["sub": "support"])
            #expect(claims["aud"] as? String == Self.billing)
            let introspected = try await client.form(
                "/oauth/introspect", ["token": try #require(answer.string("access_token"))], basic: ("support", support.secret ?? ""))
            #expect((introspected.object["act"] as? [String: String]) == ["sub": "support"])

            #expect(try await impersonate(userID, as: ("orders", orders.secret ?? "")).string("error") == "unauthorized_client")
            #expect(try await impersonate(UUID().uuidString, as: ("support", support.secret ?? "")).string("error") == "invalid_grant")
            #expect(try await impersonate("not-an-id", as: ("support", support.secret ?? "")).string("error") == "invalid_grant")

            let events = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(type: AuditEvent.admin("user.impersonated")))
            }
            #expect(events.count == 1)
            #expect(events.first?.actor == "client:support")
            #expect(events.first?.userID?.uuidString.lowercased() == userID)
        }
    }
}
