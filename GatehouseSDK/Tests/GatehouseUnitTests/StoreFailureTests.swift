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
    @Test("U-23: a store that cannot be read yet is retryable, never 'signed out'; a refused save leaves nothing half-done and revokes the new session")
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
        await #expect(throws: GatehouseError.self) { try await client.logOut() }
        await store.setRefuseLoads(false)

        await store.setRefuseSaves(true)
        await #expect(throws: ControllableStore.Refused.self) { try await client.logIn(email: "ada@example.com", password: "pw") }
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
        let signingIn = Task { try await client.logIn(email: "ada@example.com", password: "pw") }
        for _ in 0..<200 where !(await store.isHoldingASave) { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await store.isHoldingASave)
        #expect(client.session == nil && client.state == .signedOut)
        await store.releaseTheSave()
        _ = try await signingIn.value
        #expect(client.session?.user == client.currentUser && client.currentUser == Fixture.user)
    }
}
