import Foundation
import Gatehouse
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The refresh-ahead branch, driven by an injected clock: no test waits for a token to expire.
@Suite("Refresh timing (scripted server, manual clock)")
struct RefreshTimingTests {
    @Test("U-1: the access token is refreshed only inside the refresh margin, and its expiry follows the clock")
    func refreshAheadOfExpiry() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1, expiresIn: 900))
        await server.on("POST /oauth/token", Fixture.tokens(2, expiresIn: 900, idToken: nil, user: nil))
        let clock = ManualClock()
        let client = Fixture.client(server, clock: clock)
        try await client.signIn(email: "ada@example.com", password: "pw")
        #expect(client.session?.accessTokenExpiresAt == clock.now.addingTimeInterval(900))

        clock.advance(by: 900 - 61)  // 61 s left: outside the 60 s margin
        #expect(try await client.accessToken() == "access-1")
        #expect(await server.calls(to: "POST /oauth/token").isEmpty)

        clock.advance(by: 2)  // 59 s left: inside it
        #expect(try await client.accessToken() == "access-2")
        let refreshes = await server.calls(to: "POST /oauth/token")
        #expect(refreshes.count == 1)
        #expect(refreshes.first?.form["grant_type"] == "refresh_token")
        #expect(refreshes.first?.form["refresh_token"] == "refresh-1")
        #expect(refreshes.first?.form["client_id"] == "app")
        #expect(client.session?.accessTokenExpiresAt == clock.now.addingTimeInterval(900))
    }

    @Test("U-2: a wider margin refreshes earlier; ten concurrent callers past it share one refresh")
    func marginAndSingleFlight() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1, expiresIn: 900))
        var slow = Fixture.tokens(2, expiresIn: 900, user: nil)
        slow.delayMilliseconds = 100
        await server.on("POST /oauth/token", slow)
        let clock = ManualClock()
        let client = AuthClient(
            configuration: .init(
                baseURL: Fixture.baseURL, clientID: "app", store: InMemorySessionStore(), transport: server, refreshMargin: 300,
                clock: clock))
        try await client.signIn(email: "ada@example.com", password: "pw")
        clock.advance(by: 601)  // 299 s left
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await client.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["access-2"])
        #expect(await server.calls(to: "POST /oauth/token").count == 1)
    }

    @Test("U-3: a 401 from an API refreshes once and retries once with the new token")
    func unauthorizedRetriesOnce() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /oauth/token", Fixture.tokens(2, user: nil))
        await server.on("GET /api/things", .problem(401, .invalidToken), .json(200, ["ok": true]))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw")
        let (_, response) = try await client.authorizedData(for: URLRequest(url: URL(string: "https://api.example.test/api/things")!))
        #expect(response.statusCode == 200)
        let tries = await server.calls(to: "GET /api/things")
        #expect(tries.map { $0.headers["Authorization"] } == ["Bearer access-1", "Bearer access-2"])
        #expect(await server.calls(to: "POST /oauth/token").count == 1)
    }
}
