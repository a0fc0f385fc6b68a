import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and anonymous accounts")
struct AnonymousSDKTests {
    /// The payload of a JWT, as the app would read it.
    static func claims(_ token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        let part = String(parts[1])
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
        "SDK-24: signInAnonymously gives a user and tokens marked anonymous; the app writes its profile, upgrades with a password (tokens no longer anonymous) and signs in again with it to the same user and data; an address another account has is refused and leaves the anonymous account as it was"
    )
    func anonymousThenUpgrade() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: "anon-app", settings: ["anonymous=on", "email_verification=off", "methods=password,email_otp"])
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "anon-app", store: InMemorySessionStore()))
            let started = try await client.signInAnonymously()
            #expect(started.isNew && started.user.isAnonymous == true && started.user.email == nil)
            #expect(try Self.claims(client.session?.accessToken ?? "")["is_anonymous"] as? Bool == true)
            _ = try await client.updateProfile(Profile(givenName: "Ada"))

            let upgraded = try await client.upgrade(email: "ada@example.com", password: "a quiet orchard at dawn")
            #expect(upgraded.id == started.user.id && upgraded.isAnonymous == nil && upgraded.hasPassword)
            #expect(client.currentUser?.isAnonymous == nil)
            #expect(try Self.claims(client.session?.accessToken ?? "")["is_anonymous"] == nil)
            _ = try await client.signOut()
            let back = try await client.signIn(email: "ada@example.com", password: "a quiet orchard at dawn")
            #expect(back.user.id == started.user.id && back.user.profile.givenName == "Ada")

            let other = AuthClient(configuration: .init(baseURL: base, clientID: "anon-app", store: InMemorySessionStore()))
            try await other.signInAnonymously()
            let taken = try await #require(throws: SDKError.self) {
                try await other.upgrade(email: "ada@example.com", password: "a quiet orchard at dawn")
            }
            #expect(taken.code == .alreadyRegistered && taken.status == 409)
            #expect(other.currentUser?.isAnonymous == true)

            // The code way: the address proved, the same user.
            try await other.sendUpgradeCode(to: "bo@example.com")
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "bo@example.com", kind: "otp")?.code)
            let proved = try await other.upgrade(email: "bo@example.com", code: code)
            #expect(proved.emailVerified && proved.isAnonymous == nil && proved.id == other.currentUser?.id)
        }
    }
}
