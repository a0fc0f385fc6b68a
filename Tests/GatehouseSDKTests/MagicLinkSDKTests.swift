import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and magic links")
struct MagicLinkSDKTests {
    @Test(
        "SDK-23: sendMagicLink, the link's page in a browser, handle(url:) with the redirect signs in after a relaunch; another device's app cannot use the link; the universal link and the mail's code sign in too"
    )
    func magicLinks() async throws {
        let server = try await TestServer.startLive()
        let redirect = URL(string: "com.example.links:/signed-in")!
        try await server.createClient(
            id: "links-app", redirectURIs: [redirect.absoluteString], settings: ["methods=password,email_otp", "email_verification=off"])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-sdk-\(UUID().uuidString)/session.json")
        defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
        try await withLiveServer(server) { base in
            func app(_ store: any SessionStore) -> AuthClient {
                AuthClient(configuration: .init(baseURL: base, clientID: "links-app", redirectURL: redirect, store: store))
            }
            let asking = app(FileSessionStore(url: path))
            #expect(try await asking.sendMagicLink(email: "Kai@Example.com").sentTo == "k***@example.com")
            try await server.deliverMail()
            let mail = try #require(server.lastMail(to: "kai@example.com", kind: "magic_link"))
            let linkPath = try #require(mail.linkPath("/magic-link?token="))
            let link = try #require(URL(string: base.absoluteString + linkPath))

            // Another device's copy of the app has the link but not this app's verifier.
            let elsewhere = app(InMemorySessionStore())
            let refused = try await #require(throws: SDKError.self) { try await elsewhere.handle(url: link) }
            #expect(refused.code == .codeExpired)
            #expect(elsewhere.currentUser == nil)

            // The browser's page sends it back into the app, which was relaunched in between.
            let appURL = try #require(URL(string: try await Redirects.confirm(link)))
            let relaunched = app(FileSessionStore(url: path))
            #expect(try await relaunched.handle(url: appURL))
            let user = try #require(relaunched.currentUser)
            #expect(user.email == "kai@example.com" && user.emailVerified)
            _ = try await relaunched.signOut()

            // Opened as a universal link in the app that asked.
            server.clock.advance(by: 61)
            try await relaunched.sendMagicLink(email: "kai@example.com", createUser: false)
            try await server.deliverMail()
            let second = try #require(server.lastMail(to: "kai@example.com", kind: "magic_link"))
            let secondPath = try #require(second.linkPath("/magic-link?token="))
            let universal = try #require(URL(string: base.absoluteString + secondPath))
            #expect(try await relaunched.handle(url: universal))
            #expect(relaunched.currentUser?.id == user.id)
            _ = try await relaunched.signOut()

            // The code in the same kind of mail, typed into the app.
            server.clock.advance(by: 61)
            try await relaunched.sendMagicLink(email: "kai@example.com")
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: "kai@example.com", kind: "magic_link")?.code)
            let byCode = try await relaunched.signIn(code: code, for: .email("kai@example.com"))
            #expect(byCode.user.id == user.id && byCode.isNew == false)
        }
    }
}
