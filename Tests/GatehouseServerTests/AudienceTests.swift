import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Audiences and resource indicators")
struct AudienceTests {
    static let api = "https://api.example.com"
    static let files = "https://files.example.com/v2"

    @Test(
        "A client's audiences go into its access tokens after the issuer; `resource` narrows to one; an unknown one is invalid_target and spends nothing",
        arguments: TestDatabase.available)
    func audiences(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.createClient(id: "apps", settings: ["email_verification=off", "audiences=\(Self.api),\(Self.files)"])
        let backend = try await server.createClient(id: "backend", kind: .confidential, settings: ["audiences=\(Self.api)"])
        let secret = try #require(backend.secret)
        let issuer = server.server.configuration.publicURL
        try await server.withRouter { client in
            // Without audiences: one string, the issuer, as before.
            let plain = try await signUp(client)
            #expect(try decodeClaims(plain.accessToken)["aud"] as? String == issuer)

            let user = try await signUp(client, clientID: "apps")
            #expect(try decodeClaims(user.accessToken)["aud"] as? [String] == [issuer, Self.api, Self.files])
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)

            let unknown = try await client.form(
                "/oauth/token",
                [
                    "grant_type": "refresh_token", "refresh_token": user.refreshToken, "client_id": "apps",
                    "resource": "https://evil.example.com",
                ])
            #expect(unknown.status == .badRequest && unknown.string("error") == "invalid_target", "\(unknown.text)")
            let narrowed = try await client.form(
                "/oauth/token",
                ["grant_type": "refresh_token", "refresh_token": user.refreshToken, "client_id": "apps", "resource": Self.files])
            #expect(narrowed.status == .ok, "the refused request spent nothing: \(narrowed.text)")
            let access = try #require(narrowed.string("access_token"))
            #expect(try decodeClaims(access)["aud"] as? [String] == [issuer, Self.files])
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .ok)

            // Client credentials, and introspection tells the audiences.
            let machine = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "resource": Self.api], basic: ("backend", secret))
            let machineToken = try #require(machine.string("access_token"))
            #expect(try decodeClaims(machineToken)["aud"] as? [String] == [issuer, Self.api])
            let refused = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "resource": Self.files], basic: ("backend", secret))
            #expect(refused.string("error") == "invalid_target")
            let introspected = try await client.form("/oauth/introspect", ["token": access], basic: ("backend", secret))
            #expect(introspected.object["aud"] as? [String] == [issuer, Self.files])
            let single = try await client.form("/oauth/introspect", ["token": plain.accessToken], basic: ("backend", secret))
            #expect(single.object["aud"] as? String == issuer)
        }
    }

    @Test("Audiences must be absolute http(s) URIs without a fragment")
    func settingsRefuseBadURIs() async throws {
        let server = try await TestServer.start(.sqlite)
        for bad in ["api", "https://", "ftp://x.example", "https://api.example.com/#frag"] {
            await #expect(throws: ClientAdminError.self) {
                try await server.createClient(id: "c\(UUID().uuidString.prefix(6))", settings: ["audiences=\(bad)"])
            }
        }
        await server.stop()
    }
}
