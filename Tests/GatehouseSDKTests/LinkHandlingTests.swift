import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

@Suite("SDK universal links and persist")
struct LinkHandlingTests {
    static let clientID = "links-app"

    @Test("handle(url:) takes the mail's /verify and /reset links as universal links; persist: false keeps sessions out of the store")
    func universalLinks() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: Self.clientID, settings: ["methods=password,email_otp"])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-links-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: path) }
        try await withLiveServer(server) { base in
            let store = FileSessionStore(url: path)
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store))
            _ = try await client.signUp(email: "link@example.com", password: "correct horse battery")
            try await server.deliverMail()
            let verifyPath = try #require(server.lastMail(to: "link@example.com", kind: "verification")?.linkPath("/verify?token="))
            // Not ours: another host, another path.
            #expect(try await client.handle(url: URL(string: "https://elsewhere.example" + verifyPath)!) == false)
            #expect(try await client.handle(url: URL(string: base.absoluteString + "/nothing?token=x")!) == false)
            // The verification link itself, not persisted.
            #expect(try await client.handle(url: URL(string: base.absoluteString + verifyPath)!, persist: false))
            #expect(client.currentUser?.emailVerified == true)
            #expect(try await store.load() == nil)
            // A refresh of a session that is not persisted stays out of the store too.
            _ = try await client.refreshSession()
            #expect(try await store.load() == nil)

            // The recovery link: a recovery session that may set a new password without the old one.
            try await client.requestPasswordReset(email: "link@example.com")
            try await server.deliverMail()
            let resetPath = try #require(server.lastMail(to: "link@example.com", kind: "recovery")?.linkPath("/reset?token="))
            #expect(try await client.handle(url: URL(string: base.absoluteString + resetPath)!))
            #expect(try await store.load() != nil)
            try await client.changePassword(to: "a brand new passphrase")
            try await client.signIn(email: "link@example.com", password: "a brand new passphrase")

            // A code sign-in answers a named result and takes persist: too.
            _ = try await client.signOut()
            _ = try await client.sendCode(to: .email("code@example.com"))
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "code@example.com", kind: "otp")?.code)
            let signedIn = try await client.signIn(code: code, for: .email("code@example.com"), persist: false)
            #expect(signedIn.isNew && signedIn.user.email == "code@example.com")
            #expect(try await store.load() == nil)
        }
    }
}
