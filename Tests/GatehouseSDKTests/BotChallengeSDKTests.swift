import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Synchronization
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and the bot challenge")
struct BotChallengeSDKTests {
    @Test(
        "SDK-21: an app's botChallenge provider is asked before sign-up, password sign-in, a code send and recovery, and its token passes the server's check; without one the app gets isBotChallengeRefused, and a refused token is not retried with the same"
    )
    func providerTokens() async throws {
        let siteverify = try await SiteverifyStandIn.start()
        let server = try await TestServer.startLive { $0.botChallenge = SiteverifyStandIn.service(siteverify) }
        try await server.createClient(
            id: "guarded-app", settings: ["email_verification=off", "bot_challenge=on", "methods=password,email_otp"])
        let asked = Mutex<[BotChallengeAction]>([])
        try await withLiveServer(server) { base in
            let bare = AuthClient(configuration: .init(baseURL: base, clientID: "guarded-app", store: InMemorySessionStore()))
            let refused = try await #require(throws: SDKError.self) {
                try await bare.signUp(email: "sam@example.com", password: "a quiet orchard at dawn")
            }
            #expect(refused.isBotChallengeRefused && refused.code == .botChallengeRequired)

            let client = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "guarded-app", store: InMemorySessionStore(),
                    botChallenge: { action in
                        asked.withLock { $0.append(action) }
                        return "good-\(UUID().uuidString)"
                    }))
            guard case .signedIn = try await client.signUp(email: "sam@example.com", password: "a quiet orchard at dawn") else {
                Issue.record("expected a signed-in sign-up")
                return
            }
            _ = try await client.signIn(email: "sam@example.com", password: "a quiet orchard at dawn")
            _ = try await client.sendCode(to: .email("sam@example.com"))
            _ = try await client.requestPasswordReset(email: "sam@example.com")
            #expect(asked.withLock { $0 } == [.signUp, .signIn, .codeSend, .codeSend])

            let stale = AuthClient(
                configuration: .init(
                    baseURL: base, clientID: "guarded-app", store: InMemorySessionStore(), botChallenge: { _ in "used-or-forged" }))
            let failed = try await #require(throws: SDKError.self) {
                try await stale.signIn(email: "sam@example.com", password: "a quiet orchard at dawn")
            }
            #expect(failed.isBotChallengeRefused && failed.code == .botChallengeFailed && failed.status == 403)
        }
        await siteverify.stop()
    }
}
