import Foundation
import Gatehouse
import Testing

/// A store that can refuse, or hold a save until released, to see what the client does meanwhile.
actor ControllableStore: SessionStore {
    struct Refused: Error {}
    private var session: StoredSession?
    var refuseLoads = false
    var refuseSaves = false
    private var heldSave: CheckedContinuation<Void, Never>?
    private var holdNextSave = false

    func setRefuseLoads(_ value: Bool) { refuseLoads = value }
    func setRefuseSaves(_ value: Bool) { refuseSaves = value }
    func holdTheNextSave() { holdNextSave = true }
    var isHoldingASave: Bool { heldSave != nil }
    func releaseTheSave() {
        heldSave?.resume()
        heldSave = nil
    }

    func load() async throws -> StoredSession? {
        if refuseLoads { throw Refused() }
        return session
    }

    func save(_ session: StoredSession) async throws {
        if refuseSaves { throw Refused() }
        if holdNextSave {
            holdNextSave = false
            await withCheckedContinuation { heldSave = $0 }
        }
        self.session = session
    }

    func clear() async throws { session = nil }
    func savePendingVerifier(_ verifier: String?) async throws {}
    func loadPendingVerifier() async throws -> String? { nil }
}

@Suite("Stores that fail or stall (scripted server)")
struct StoreFailureTests {
    @Test(
        "U-23: a store that cannot be read yet is retryable, never 'signed out'; a refused save leaves nothing half-done and revokes the new session"
    )
    func failingStore() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /oauth/revoke", ScriptedServer.Reply(status: 200, body: Data()))
        let store = ControllableStore()
        let client = Fixture.client(server, store: store)

        await store.setRefuseLoads(true)
        let locked = try await #require(throws: GatehouseError.self) { try await client.accessToken() }
        #expect(locked.code == GatehouseError.storeUnavailable && locked.isRetryable && !locked.isSessionEnded)
        #expect(client.state == .restoring)
        await #expect(throws: GatehouseError.self) { try await client.signOut() }
        await store.setRefuseLoads(false)

        await store.setRefuseSaves(true)
        await #expect(throws: ControllableStore.Refused.self) { try await client.signIn(email: "ada@example.com", password: "pw") }
        #expect(client.session == nil && client.currentUser == nil)
        #expect(await server.calls(to: "POST /oauth/revoke").map { $0.form["token"] } == ["refresh-1"])
    }

    @Test("U-24: while the store is still saving a sign-in, readers see neither a user nor a session; then both at once")
    func consistentWhileSaving() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        let store = ControllableStore()
        let client = Fixture.client(server, store: store)
        await client.restore()
        await store.holdTheNextSave()
        let signingIn = Task { try await client.signIn(email: "ada@example.com", password: "pw") }
        for _ in 0..<200 where !(await store.isHoldingASave) { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await store.isHoldingASave)
        #expect(client.session == nil && client.state == .signedOut)
        await store.releaseTheSave()
        _ = try await signingIn.value
        #expect(client.session?.user == client.currentUser && client.currentUser == Fixture.user)
    }
}

@Suite("Calls that overlap a refresh (scripted server)")
struct OverlapTests {
    /// Waits until the server has seen `count` calls to `route`.
    func waitForCalls(_ server: ScriptedServer, _ route: String, _ count: Int) async throws {
        for _ in 0..<400 where await server.calls(to: route).count < count { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await server.calls(to: route).count >= count)
    }

    @Test("U-25: a refresh that comes back after a new sign-in neither replaces nor ends the new session, and revokes what it renewed")
    func refreshRacingSignIn() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1), Fixture.tokens(3), Fixture.tokens(5))
        var slow = Fixture.tokens(2, user: nil)
        slow.delayMilliseconds = 200
        var refused = ScriptedServer.Reply.json(400, OAuthErrorBody(error: "invalid_grant"))
        refused.delayMilliseconds = 200
        await server.on("POST /oauth/token", slow, refused)
        await server.on("POST /oauth/revoke", ScriptedServer.Reply(status: 200, body: Data()))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw")

        let renewing = Task { try await client.refreshSession() }
        try await waitForCalls(server, "POST /oauth/token", 1)
        try await client.signIn(email: "ada@example.com", password: "pw")
        #expect(try await renewing.value.accessToken == "access-3")
        #expect(client.session?.accessToken == "access-3" && client.state == .signedIn(Fixture.user))
        #expect(await Set(server.calls(to: "POST /oauth/revoke").compactMap { $0.form["token"] }) == ["refresh-1", "refresh-2"])

        // A refresh the server refuses while a newer sign-in lands does not sign the newer one out.
        let refusedRenewal = Task { try await client.refreshSession() }
        try await waitForCalls(server, "POST /oauth/token", 2)
        try await client.signIn(email: "ada@example.com", password: "pw")
        await #expect(throws: GatehouseError.self) { try await refusedRenewal.value }
        #expect(client.session?.accessToken == "access-5" && client.state == .signedIn(Fixture.user))
    }

    @Test("U-26: a profile update during a refresh keeps both: the new tokens and the new user, in memory and in the store")
    func updateDuringRefresh() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        var slow = Fixture.tokens(2, user: nil)
        slow.delayMilliseconds = 200
        await server.on("POST /oauth/token", slow)
        var renamed = Fixture.user
        renamed.profile.givenName = "Augusta"
        await server.on("PATCH /v1/me", .json(200, renamed))
        let store = InMemorySessionStore()
        let client = Fixture.client(server, store: store)
        try await client.signIn(email: "ada@example.com", password: "pw")
        let renewing = Task { try await client.refreshSession() }
        try await waitForCalls(server, "POST /oauth/token", 1)
        try await client.updateProfile(Profile(givenName: "Augusta"))
        _ = try await renewing.value
        #expect(client.session?.accessToken == "access-2" && client.session?.user == renamed && client.currentUser == renamed)
        let stored = try await store.load()
        #expect(stored?.refreshToken == "refresh-2" && stored?.user == renamed)
    }

    @Test("U-27: a store holding something that is not a session starts signed out instead of restoring for good")
    func damagedStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-unit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileSessionStore(url: directory.appendingPathComponent("session.json"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{\"not\": \"a session\"}".utf8).write(to: store.url)
        let client = Fixture.client(ScriptedServer(), store: store)
        await client.restore()
        #expect(client.state == .signedOut)
        #expect(!FileManager.default.fileExists(atPath: store.url.path))
    }
}
