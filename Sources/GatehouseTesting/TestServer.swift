import Argon2
import CryptoExtras
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization

/// A Gatehouse on a fresh database with a test clock, cheap Argon2 parameters (debug builds hash
/// slowly; the cost parameters do not change any rule under test) and a client per setting needed.
public struct TestServer: Sendable {
    public let server: GatehouseServer
    public let clock: TestClock
    public let database: TestDatabase
    /// What the outbox delivered, when no other transport was given.
    public let mail: CapturedMail
    private let cleanup: @Sendable () async -> Void
    private let directory: URL
    private let stopGuard: StopGuard

    public static let testArgon2 = Argon2Parameters(memoryKiB: 256, iterations: 1, parallelism: 1)

    public static func start(
        _ database: TestDatabase = .sqlite, logs: CapturedLogs? = nil,
        transports: [OutboxMessage.Channel: any MessageTransport]? = nil, hooks: FlowHooks = FlowHooks(),
        assurance: (any AssurancePolicy)? = nil, factors: [any SecondFactor]? = nil, clock: TestClock = TestClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let (url, dropDatabase) = try await HangWatch.track("make a \(database) database") { try await database.make() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-srv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = ServerConfiguration()
        configuration.databaseURL = url
        configuration.secretFile = directory.appendingPathComponent("secret").path
        configuration.outboxDir = directory.appendingPathComponent("outbox").path
        configuration.publicURL = "http://127.0.0.1:8080"
        configuration.argon2 = testArgon2
        configuration.runOutboxDispatcher = false
        // Production's timeouts (5 s for a provider, 15 s for a delivery) are shorter than a peer in
        // this process or beside it may be starved for when the whole suite loads two cores: a late
        // answer would fail a sign-in the test expects to pass, or leave a delivery for a retry that
        // the test's stopped clock never makes due.
        configuration.providerTimeout = .seconds(60)
        configuration.deliveryTimeout = .seconds(60)
        configure(&configuration)
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .critical
        if let logs { logger = logs.logger(label: "gatehouse-test") }
        try await seedSigningKey(configuration, clock: clock, logger: logger)
        // Social providers (a mock provider, a test issuer) mint their tokens at real time; a server
        // whose clock stood still while a loaded run starved the test took them for tokens from the
        // future (`iat` past its minute of leeway). Advancing still works on a following clock.
        if configuration.socialFile != nil { clock.followRealTime() }
        let mail = CapturedMail()
        let server = try await HangWatch.track("start a server on \(database)") {
            try await GatehouseServer.start(
                configuration, clock: clock, logger: logger, transports: transports ?? [.email: mail, .sms: mail], hooks: hooks,
                assurance: assurance, factors: factors)
        }
        return TestServer(
            server: server, clock: clock, database: database, mail: mail, cleanup: dropDatabase, directory: directory,
            stopGuard: StopGuard(server: server, cleanup: dropDatabase))
    }

    /// A SQLite server whose public URL is the loopback address ``runLive(_:)`` serves it on, as in
    /// production, where a client's DPoP proofs name the public URL (`htu`).
    public static func startLive(
        logs: CapturedLogs? = nil, transports: [OutboxMessage.Channel: any MessageTransport]? = nil, hooks: FlowHooks = FlowHooks(),
        assurance: (any AssurancePolicy)? = nil, factors: [any SecondFactor]? = nil, clock: TestClock = TestClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let port = try await HookServer.freePort()
        return try await start(
            .sqlite, logs: logs, transports: transports, hooks: hooks, assurance: assurance, factors: factors, clock: clock
        ) {
            $0.port = port
            $0.publicURL = "http://127.0.0.1:\(port)"
            configure(&$0)
        }
    }

    /// Returns once `base` answers `/health/live`, or throws when ``eventually(within:every:_:)`` gives
    /// up: a body run before the server listens meets a closed port.
    public static func waitUntilLive(_ base: URL) async throws {
        let live: Bool? = try await eventually {
            let answer = try? await NoRedirectHTTP.send("GET", base.appendingPathComponent("health/live"))
            return answer?.status == 200 ? true : nil
        }
        if live == nil { throw NotLive(url: base) }
    }

    /// A live server did not answer within its deadline.
    public struct NotLive: Error {
        public var url: URL
    }

    /// Serves the server on its configured port (its public URL) while `body` runs, then stops it.
    public func runLive(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let running = Task { [server] in try await server.makeApplication().runService(gracefulShutdownSignals: []) }
        let base = URL(string: server.configuration.publicURL)!
        do {
            try await Self.waitUntilLive(base)
            try await HangWatch.track("\(directory.lastPathComponent): live body") { try await body(base) }
        } catch {
            running.cancel()
            _ = try? await running.value
            await stop()
            throw error
        }
        running.cancel()
        await HangWatch.track("\(directory.lastPathComponent): live service cancelled") { _ = try? await running.value }
        await stop()
    }

    public var persistence: any Persistence { server.persistence }
    public var services: CoreServices { server.services }
    public var defaultClientID: String { server.createdDefaultClient!.id }

    /// Drains the outbox once, as the background dispatcher would.
    @discardableResult
    public func deliverMail() async throws -> Int {
        try await HangWatch.track("\(directory.lastPathComponent): mail round") { try await server.delivery.runOnce() }
    }

    /// The newest delivered message to `recipient` of `kind`.
    public func lastMail(to recipient: String, kind: String) -> OutgoingMessage? {
        mail.messages.last { $0.recipient == recipient && $0.kind == kind }
    }

    /// Creates a client through the same code path as `gatehouse clients create`.
    @discardableResult
    public func createClient(
        id: String, kind: ClientRecord.Kind = .public, redirectURIs: [String] = [], settings: [String] = []
    ) async throws -> ClientAdmin.Created {
        try await ClientAdmin(persistence: persistence, clock: clock).create(
            id: id, name: id, kind: kind, redirectURIs: redirectURIs, scopes: [], settings: settings)
    }

    /// Runs `body` against the in-process router, then tears everything down.
    public func withRouter(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        do {
            let label = directory.lastPathComponent
            // Without maintenance services (none falls due within a test) the router framework runs the
            // body directly, with no service group: no SIGTERM/SIGINT dispatch sources registered and
            // awaited per test. The whole suite hung now and then with every thread idle (a continuation
            // never resumed); hundreds of service groups awaiting their signal sources' registration at
            // once was a suspect, not reproduced in isolation (README, "Known test-suite issue").
            try await HangWatch.track("\(label): router test") {
                try await server.makeApplication(maintenance: false).test(.router) { client in
                    try await HangWatch.track("\(label): router test body") { try await body(client) }
                }
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// Runs `body` against the server on a real socket (Hummingbird's live test framework), then tears
    /// everything down, also when `body` throws: a server dropped without ``stop()`` leaves its SQLite
    /// connections open, which sqlite-nio asserts against and which crashed the whole test binary.
    public func withLive(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        do {
            try await HangWatch.track("\(directory.lastPathComponent): live test") {
                try await server.makeApplication().test(.live, body)
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    public func stop() async {
        stopGuard.stopped.store(true, ordering: .releasing)
        await HangWatch.track("\(directory.lastPathComponent): stop") {
            await server.shutdown()
            await cleanup()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// One RSA key for every test server of this process, inserted before the server first loads its
    /// keys (only into a database without keys): generating one per server (0.1–0.5 s of CPU each,
    /// some 300 servers a run) made the suite's load, not its work, decide timing-sensitive tests.
    private static func seedSigningKey(_ configuration: ServerConfiguration, clock: TestClock, logger: Logger) async throws {
        let secret = try ServerSecret.loadOrCreate(path: configuration.secretFile)
        let persistence = try await SQLPersistence.open(try DatabaseURL(configuration.databaseURL), logger: logger)
        do {
            let now = clock.now()
            try await persistence.transaction { stores in
                guard try await stores.signingKeys.listPublished(now: now).isEmpty else { return }
                try await stores.signingKeys.insert(try SigningKeys.record(.rs256, privateKey: sharedRSAKey, secret: secret, now: now))
            }
        } catch {
            await persistence.shutdown()
            throw error
        }
        await persistence.shutdown()
    }

    private static let sharedRSAKey: Data = {
        // Made once per process; a failure here is a broken crypto library, not a test outcome.
        (try? _RSA.Signing.PrivateKey(keySize: .bits2048).derRepresentation) ?? Data()
    }()
}

/// Shuts a server down when a test drops its ``TestServer`` without ``TestServer/stop()`` (a test that
/// threw between its start and its stop): sqlite-nio asserts that every connection was closed before
/// it is freed, and that assertion took the whole test binary, and every other test's result, with it.
final class StopGuard: Sendable {
    let stopped = Atomic<Bool>(false)
    private let server: GatehouseServer
    private let cleanup: @Sendable () async -> Void

    init(server: GatehouseServer, cleanup: @escaping @Sendable () async -> Void) {
        self.server = server
        self.cleanup = cleanup
    }

    deinit {
        guard !stopped.load(ordering: .acquiring) else { return }
        // The task keeps the server (and so its connections) alive until they are closed.
        Task { [server, cleanup] in
            await server.shutdown()
            await cleanup()
        }
    }
}
