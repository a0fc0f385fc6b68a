import Foundation
import Gatehouse
import Testing

@Suite("Custom authenticator challenges (scripted server)")
struct CustomChallengeTests {
    @Test("U-29: the delegate's custom challenge carries the server's failure counts, and the challenge it approved is the one answered")
    func delegateSeesServerCounts() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /v1/logout", .noContent)
        await server.on(
            "POST /v1/me/authenticators",
            .json(
                201,
                AuthenticatorInfo(
                    id: "auth-1", type: .custom, customType: "hw-token", clientId: "app", deviceId: "dev", deviceName: nil,
                    maxFailureCount: 5, failureCount: 0, createdAt: Date(timeIntervalSince1970: 1_800_000_000))))
        // Registration proves the key with the first challenge; the delegate form gets the second.
        await server.on(
            "POST /v1/authenticators/challenge", Self.challenge("ch-1", max: 5, previous: 0), Self.challenge("ch-2", max: 5, previous: 2),
            Self.challenge("ch-3", max: 5, previous: 3))
        await server.on("POST /v1/authenticators/authenticate", Fixture.tokens(2), Fixture.tokens(3, isNew: false))
        let client = Fixture.client(server)
        let token = RecordingAuthenticator()
        let devices = DeviceProfiles(client: client, configuration: .init(store: InMemoryDeviceStore(), customAuthenticators: [token]))
        try await client.signIn(email: "ada@example.com", password: "pw")
        let profile = try await devices.registerCustom("hw-token")

        let delegate = ApprovingDelegate()
        let result = await devices.signIn(profile: profile, authenticator: profile.authenticators[0], delegate: delegate)
        #expect(result?.user == Fixture.user && result?.isNew == false && result?.session.accessToken == "access-3")
        let shown = try #require(await delegate.challenges.first)
        #expect(await delegate.challenges.count == 1)
        #expect(shown.counts == FailureCounts(max: 5, previous: 2))
        #expect(shown.counts.remainingFailureCount == 3)
        // The authenticator is asked about the same challenge, and the server gets the answer to it.
        #expect(await token.challenges.map(\.counts) == [FailureCounts(max: 5, previous: 2)])
        #expect(await server.calls(to: "POST /v1/authenticators/challenge").count == 2)
        #expect(await server.calls(to: "POST /v1/authenticators/authenticate").last?.json["challenge_id"] as? String == "ch-2")

        // The direct form shows the authenticator the server's counts as well.
        try await devices.signIn(profile: profile, authenticator: profile.authenticators[0])
        #expect(await token.challenges.last?.counts == FailureCounts(max: 5, previous: 3))
    }

    static func challenge(_ id: String, max: Int, previous: Int) -> ScriptedServer.Reply {
        .json(
            200,
            DeviceChallenge(challengeId: id, challenge: "nonce-\(id)", expiresIn: 120, counts: FailureCounts(max: max, previous: previous)))
    }
}

/// Approves every custom challenge and keeps what it was shown.
private actor ApprovingDelegate: AuthenticationDelegate {
    private(set) var challenges: [CustomChallenge] = []

    func didReceiveCustomChallenge(_ challenge: CustomChallenge) async -> Bool {
        challenges.append(challenge)
        return true
    }
}

/// An app's own authenticator that passes and keeps the challenges it answered.
private actor RecordingAuthenticator: CustomAuthenticator {
    private(set) var challenges: [CustomChallenge] = []
    nonisolated let type = "hw-token"

    func authenticate(_ challenge: CustomChallenge) async throws -> String? {
        challenges.append(challenge)
        return nil
    }
}
