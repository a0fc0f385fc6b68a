import Argon2
import Foundation
import GatehouseCore
import Logging

/// The core's services on in-memory ports, with a test clock and cheap Argon2 parameters: flows run
/// without a database, a socket or HTTP.
public struct CoreHarness: Sendable {
    public let services: CoreServices
    public let persistence: InMemoryPersistence
    public let clock: TestClock
    let pool: HashingPool

    public static func start(
        hooks: [any FlowHook] = [], assurance: any AssurancePolicy = FirstFactorSuffices(), factors: [any SecondFactor] = [],
        social: SocialFederation = SocialFederation(), clock: TestClock = TestClock(),
        configure: (inout CoreSettings) -> Void = { _ in }
    ) async throws
        -> CoreHarness
    {
        try await make(
            hooks: hooks, assurance: assurance, factors: { _, _ in factors }, social: social, clock: clock, configure: configure)
    }

    /// The server's own second factors and policy (an authenticator app, recovery codes,
    /// ``FactorPolicy``), as `GatehouseServer` runs them.
    public static func startWithFactors(
        hooks: [any FlowHook] = [], social: SocialFederation = SocialFederation(), clock: TestClock = TestClock(),
        configure: (inout CoreSettings) -> Void = { _ in }
    ) async throws -> CoreHarness {
        try await make(
            hooks: hooks, assurance: FactorPolicy(),
            factors: { secret, clock in SecondFactors.standard(secret: secret, clock: clock) },
            social: social, clock: clock, configure: configure)
    }

    /// Second factors made with the harness's own secret and clock (a passkey factor, whose challenges
    /// are keyed by the server secret), under `assurance`.
    public static func start(
        assurance: any AssurancePolicy, factors: @escaping (ServerSecret, any WallClock) -> [any SecondFactor],
        social: SocialFederation = SocialFederation(), clock: TestClock = TestClock()
    ) async throws -> CoreHarness {
        try await make(
            hooks: [], assurance: assurance, factors: { secret, clock in factors(secret, clock) }, social: social, clock: clock
        ) { _ in }
    }

    /// The public URL the harness's services run under, so a test can build what depends on it (the
    /// passkeys' relying party).
    public static let publicURL = "http://127.0.0.1:8080"

    private static func make(
        hooks: [any FlowHook], assurance: any AssurancePolicy, factors: (ServerSecret, TestClock) -> [any SecondFactor],
        social: SocialFederation, clock: TestClock, configure: (inout CoreSettings) -> Void
    ) async throws -> CoreHarness {
        let persistence = InMemoryPersistence()
        let secret = try ServerSecret(bytes: Array(repeating: 7, count: 32))
        let keys = SigningKeys(persistence: persistence, secret: secret, clock: clock)
        try await keys.load()
        var settings = CoreSettings(publicURL: Self.publicURL)
        configure(&settings)
        let pool = HashingPool(threads: 1, maxQueued: 64)
        var logger = Logger(label: "gatehouse-core-test")
        logger.logLevel = .critical
        let services = CoreServices(
            persistence: persistence, hasher: try PasswordHasher(parameters: TestServer.testArgon2, pool: pool),
            tokens: AccessTokens(keys: keys, issuer: settings.publicURL, clock: clock, subjects: SubjectIdentifiers(secret: secret)),
            secret: secret, clock: clock,
            settings: settings, logger: logger, hooks: FlowHooks(hooks), social: social, assurance: assurance,
            factors: factors(secret, clock))
        return CoreHarness(services: services, persistence: persistence, clock: clock, pool: pool)
    }

    /// A client created the way `gatehouse clients create` does.
    @discardableResult
    public func createClient(
        id: String, kind: ClientRecord.Kind = .public, redirectURIs: [String] = [], settings: [String] = [],
        isDefault: Bool = false
    ) async throws -> ClientAdmin.Created {
        try await ClientAdmin(persistence: persistence, clock: clock).create(
            id: id, name: id, kind: kind, redirectURIs: redirectURIs, scopes: [], settings: settings, isDefault: isDefault)
    }

    /// The sealed payloads of the outbox rows to `recipient`, opened: what a mail would carry.
    public func outboxVariables(to recipient: String, kind: String) async throws -> [[String: String]] {
        let rows = try await persistence.read { try await $0.outbox.list(status: nil, limit: 1000) }
        return try rows.filter { $0.recipient == recipient && $0.kind == kind }.sorted { $0.createdAt < $1.createdAt }.map {
            try JSONDecoder().decode([String: String].self, from: try services.secret.open($0.sealedPayload))
        }
    }

    public func stop() async { await pool.shutdown() }
}
