import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and social sign-in")
struct SocialSDKTests {
    @Test(
        "SDK-14: signIn(with:) sends a provider's ID token with the raw nonce: isNew on the first sign-in only, the session kept and refreshed like any other; a replayed token throws invalid_provider_token; SocialNonce hashes as Apple wants"
    )
    func socialSignIn() async throws {
        let issuer = TestIDTokenIssuer()
        let jwks = try await HookServer.start { _ in HookServer.Answer(body: issuer.jwks) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: [
            "providers": [
                [
                    "id": "acme", "type": "oidc", "issuer": issuer.issuer, "jwks_uri": "http://127.0.0.1:\(jwks.port)/jwks",
                    "client_ids": ["ios-app"],
                ]
            ]
        ]).write(to: file)
        let server = try await TestServer.startLive() { $0.socialFile = file.path }
        try await server.createClient(id: "social-app", settings: ["email_verification=off", "social_providers=acme"])
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "social-app", store: InMemorySessionStore()))
            let info = try await client.clientInfo()
            #expect(info.socialProviders == ["acme"])

            let nonce = SocialNonce()
            #expect(nonce.hashed.count == 64 && nonce.raw.count >= 43 && nonce.raw != nonce.hashed)
            // The provider got the hashed nonce (as Sign in with Apple does); the app sends the raw one.
            let first = try issuer.token(
                issuer.claims(subject: "u-1", audience: "ios-app", nonce: nonce.hashed, email: "grace@example.com"))
            let signedUp = try await client.signIn(with: .openID(provider: "acme", idToken: first, nonce: nonce.raw))
            #expect(signedUp.isNew && signedUp.user.email == "grace@example.com")
            #expect(client.currentUser?.id == signedUp.user.id)
            _ = try await client.refreshSession()
            #expect(client.currentUser?.id == signedUp.user.id)

            let replay = try await #require(throws: SDKError.self) {
                try await client.signIn(with: .openID(provider: "acme", idToken: first, nonce: nonce.raw))
            }
            #expect(replay.code == .invalidProviderToken)

            let again = SocialNonce()
            let second = try issuer.token(issuer.claims(subject: "u-1", audience: "ios-app", nonce: again.raw, email: "grace@example.com"))
            let signedIn = try await client.signIn(with: .openID(provider: "acme", idToken: second, nonce: again.raw))
            #expect(!signedIn.isNew && signedIn.user.id == signedUp.user.id)
        }
        await jwks.stop()
    }
}
