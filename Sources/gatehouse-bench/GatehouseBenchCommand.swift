import ArgumentParser
import AsyncHTTPClient
import Foundation
import GatehouseBench
import NIOCore
import NIOPosix

@main
struct GatehouseBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse-bench",
        abstract: "Load generator for Gatehouse and its peers: closed- or open-loop scenarios with HDR latency figures.",
        discussion: """
            Against Gatehouse, the client (--client-id) must have email_verification=off so seeded users can sign in; \
            introspection and client credentials need a confidential client (--confidential-client ID:SECRET). \
            Users are bench-seed-N@example.com with password "bench password N seed"; they are signed up first unless \
            --no-seed says they exist already (gatehouse users import, or a peer's set-up script).
            """)

    @Option(help: "Base URL of the server") var url = "http://127.0.0.1:8080"
    @Option(help: "Server kind: \(Target.Kind.allCases.map(\.rawValue).joined(separator: ", "))") var target: Target.Kind = .gatehouse
    @Option(name: .customLong("client-id"), help: "Public client the virtual users sign in with") var clientID = "bench"
    @Option(name: [.customLong("confidential-client"), .customLong("introspect-client")], help: "ID:SECRET of a confidential client")
    var confidentialClient: String?
    @Option(
        name: .customLong("scenario"), help: "Scenario to run; repeatable (\(Scenario.allCases.map(\.rawValue).joined(separator: ", ")))")
    var scenarios: [Scenario] = [.jwks, .introspect, .me, .refresh, .login]
    @Option(help: "Concurrent virtual users (one connection each)") var connections = 32
    @Option(help: "Seconds per scenario") var duration = 10.0
    @Option(help: "Open-loop rate in requests/s (default: closed-loop)") var rate: Double?
    @Option(name: .customLong("login-rate"), help: "mixed: the login flood's open-loop rate") var loginRate = 200.0
    @Option(name: .customLong("login-connections"), help: "mixed: connections the login flood may use") var loginConnections = 64
    @Option(help: "Seeded users to sign in with") var users = 64
    @Option(name: .customLong("totp-users"), help: "login-totp: accounts with an authenticator app (each signs in once)")
    var totpUsers = 2048
    @Option(
        name: .customLong("print-totp-users"),
        help: "Print the login-totp accounts as `gatehouse users import` lines with this password hash, and exit")
    var printTOTPUsers: String?
    @Option(name: .customLong("social-key"), help: "social: PEM file of the P-256 key whose JWKS the server's provider 'bench' publishes")
    var socialKey: String?
    @Option(
        name: .customLong("make-social-key"), help: "Write a new P-256 key to this PEM file, print its JWKS, and exit (for --social-key)")
    var makeSocialKey: String?
    @Flag(name: .customLong("no-seed"), help: "The users exist already; do not sign them up") var noSeed = false
    @Option(name: .customLong("token-path"), help: "Override the target's token endpoint path") var tokenPath: String?
    @Option(name: .customLong("introspect-path")) var introspectPath: String?
    @Option(name: .customLong("jwks-path")) var jwksPath: String?
    @Option(name: .customLong("me-path"), help: "Override the authenticated GET's path") var mePath: String?
    @Option(help: "Scope to ask for (peers)") var scope: String?
    @Flag(help: "Print the results as JSON instead of a table") var json = false
    @Option(
        name: .customLong("serve-floor"),
        help: "Serve the HTTP floor (one trivial Hummingbird route, GET /floor) on this loopback port until stopped")
    var serveFloor: Int?

    func validate() throws {
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        guard loginRate > 0, connections > 0, loginConnections > 0, users > 0, duration > 0 else {
            throw ValidationError("rates, connections, users and duration must be positive")
        }
    }

    func run() async throws {
        if let serveFloor {
            try await FloorServer.run(port: serveFloor)
            return
        }
        if let makeSocialKey {
            print(try BenchIdentityProvider.makeKey(pemFile: makeSocialKey))
            return
        }
        if let printTOTPUsers {
            for account in BenchTOTPUser.make(count: totpUsers) { print(try account.importLine(passwordHash: printTOTPUsers)) }
            return
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections + loginConnections)
        // A redirect is an answer to measure (the hosted sign-in's code comes in one), not a hop to take.
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
        let client = BenchClient(http: http, baseURL: url)
        var rows: [LoadRunner.Row] = []
        do {
            let target = try makeTarget()
            let seeded = SeedUser.make(count: users, runID: "seed")
            if !noSeed { try await seed(seeded, client: client, target: target) }
            var runner = LoadRunner(
                client: client, target: target, connections: connections, duration: duration, users: seeded, rate: rate,
                loginRate: loginRate, loginConnections: loginConnections,
                identityProvider: try socialKey.map { try BenchIdentityProvider(pemFile: $0) })
            runner.totpUsers = BenchTOTPUser.make(count: totpUsers)
            for scenario in scenarios {
                let started = Date()
                rows += try await runner.run(scenario) { done in
                    let elapsed = max(0.001, Date().timeIntervalSince(started))
                    FileHandle.standardError.write(
                        Data(
                            String(
                                format: "\r%@: %d requests, %.0f/s, %.0f s left   ", scenario.rawValue, done, Double(done) / elapsed,
                                max(0, duration - elapsed)
                            ).utf8))
                }
                FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
        print(json ? try Report.json(rows) : Report.table(rows))
    }

    private func makeTarget() throws -> Target {
        var confidential: (String, String)?
        if let value = confidentialClient {
            guard let colon = value.firstIndex(of: ":") else { throw ValidationError("--confidential-client is ID:SECRET") }
            confidential = (String(value[..<colon]), String(value[value.index(after: colon)...]))
        }
        var target = Target(kind: target, clientID: clientID, confidential: confidential)
        if let tokenPath { target.tokenPath = tokenPath }
        if let introspectPath { target.introspectPath = introspectPath }
        if let jwksPath { target.jwksPath = jwksPath }
        if let mePath { target.mePath = mePath }
        target.scope = scope
        return target
    }

    /// Signs the users up (an existing account is fine: earlier runs seeded it).
    private func seed(_ seeded: [SeedUser], client: BenchClient, target: Target) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, user) in seeded.enumerated() {
                if index >= 8 { try await group.next() }
                group.addTask {
                    let answer = try await client.send(target.signup(email: user.email, password: user.password))
                    guard (200..<300).contains(answer.status) || target.alreadyExists.contains(answer.status) else {
                        throw BenchError.setup("seeding \(user.email) answered \(answer.status)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

extension Scenario: ExpressibleByArgument {}
extension Target.Kind: ExpressibleByArgument {}
