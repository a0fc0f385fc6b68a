import Foundation
import Gatehouse
import Testing

@Suite("Session stores")
struct StoreDefaultsTests {
    @Test("U-15: a configuration that names no store keeps the session: Keychain on Apple platforms, a file elsewhere, never memory")
    func defaultStoreKeeps() throws {
        let configuration = AuthClient.Configuration(baseURL: URL(string: "https://id.example.test:8443")!, clientID: "my/app")
        #expect(!(configuration.store is InMemorySessionStore))
        #if canImport(Security)
            let keychain = try #require(configuration.store as? KeychainSessionStore)
            #expect(keychain.service == "gatehouse:id.example.test:8443" && keychain.account == "my/app")
        #else
            let file = try #require(configuration.store as? FileSessionStore)
            let support = try #require(FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first)
            #expect(file.url.path == support.path + "/Gatehouse/id.example.test:8443/my_app/session.json")
        #endif
    }

    @Test("U-22: device profiles without a store keep their keys beside the session, never in memory")
    func defaultDeviceStore() throws {
        let client = AuthClient(configuration: .init(baseURL: URL(string: "https://id.example.test")!, clientID: "app"))
        let profiles = DeviceProfiles(client: client)
        #expect(!(profiles.store is InMemoryDeviceStore))
        #if canImport(Security)
            let keychain = try #require(profiles.store as? KeychainDeviceStore)
            _ = keychain
        #else
            let file = try #require(profiles.store as? FileDeviceStore)
            let session = try #require(client.configuration.store as? FileSessionStore)
            #expect(file.url.deletingLastPathComponent() == session.url.deletingLastPathComponent())
            #expect(file.url.lastPathComponent == "device.json")
        #endif
        let memory = DeviceProfiles(client: client, configuration: .init(store: InMemoryDeviceStore()))
        #expect(memory.store is InMemoryDeviceStore)
    }

    @Test("U-16: the file store is 0600, survives a new client, and keeps the PKCE verifier apart")
    func fileStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-unit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileSessionStore(url: directory.appendingPathComponent("session.json"))
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        try await Fixture.client(server, store: store).signIn(email: "ada@example.com", password: "pw")
        let attributes = try FileManager.default.attributesOfItem(atPath: store.url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let relaunched = Fixture.client(server, store: store)
        await relaunched.restore()
        #expect(relaunched.currentUser == Fixture.user && relaunched.session?.accessToken == "access-1")

        try await store.savePendingVerifier("verifier")
        #expect(try await store.loadPendingVerifier() == "verifier")
        try await store.savePendingVerifier(nil)
        #expect(try await store.loadPendingVerifier() == nil)
        #expect(try await store.load()?.refreshToken == "refresh-1")
    }
}

/// Runs two bodies under a store's exclusive access at once and tells whether they overlapped.
func overlapped(_ store: any SessionStore) async throws -> Bool {
    actor Tracker {
        var inside = 0
        var overlap = false
        func enter() {
            inside += 1
            if inside > 1 { overlap = true }
        }
        func leave() { inside -= 1 }
    }
    let tracker = Tracker()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<2 {
            group.addTask {
                try await store.withExclusiveAccess {
                    await tracker.enter()
                    try await Task.sleep(nanoseconds: 50_000_000)
                    await tracker.leave()
                }
            }
        }
        try await group.waitForAll()
    }
    return await tracker.overlap
}

@Suite("Exclusive access")
struct ExclusiveAccessTests {
    @Test("U-17: two holders of one file store's lock never overlap; the in-memory store does not lock")
    func fileLock() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-unit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await overlapped(FileSessionStore(url: directory.appendingPathComponent("session.json"))) == false)
        #expect(try await overlapped(InMemorySessionStore()) == true)
    }
}
