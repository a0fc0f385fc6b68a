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
        abstract: "Load generator for a running Gatehouse: closed-loop scenarios with HDR latency figures.",
        discussion: """
            The target's client (--client-id) must have email_verification=off so seeded users can sign in. \
            Introspection needs a confidential client (--introspect-client ID:SECRET).
            """)

    @Option(help: "Base URL of the server") var url = "http://127.0.0.1:8080"
    @Option(name: .customLong("client-id"), help: "Public client the virtual users sign in with") var clientID: String
    @Option(name: .customLong("introspect-client"), help: "ID:SECRET of a confidential client, for the introspect scenario")
    var introspectClient: String?
    @Option(name: .customLong("scenario"), help: "Scenario to run; repeatable (\(Scenario.allCases.map(\.rawValue).joined(separator: ", ")))")
    var scenarios: [Scenario] = [.jwks, .introspect, .me, .refresh, .login]
    @Option(help: "Concurrent virtual users (one connection each)") var connections = 32
    @Option(help: "Seconds per scenario") var duration = 10.0
    @Option(help: "Users to seed and sign in with") var users = 64
    @Flag(help: "Print the results as JSON instead of a table") var json = false

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let http = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
        let client = BenchClient(http: http, baseURL: url, clientID: clientID)
        var results: [(Scenario, LoadSummary)] = []
        do {
            let seeded = try await seed(client)
            let credentials = introspectClient.flatMap { value -> (String, String)? in
                guard let colon = value.firstIndex(of: ":") else { return nil }
                return (String(value[..<colon]), String(value[value.index(after: colon)...]))
            }
            let runner = LoadRunner(
                client: client, connections: connections, duration: duration, users: seeded,
                introspectionCredentials: credentials)
            for scenario in scenarios {
                let summary = try await runner.run(scenario) { done in
                    FileHandle.standardError.write(Data("\r\(scenario.rawValue): \(done) requests…".utf8))
                }
                FileHandle.standardError.write(Data("\r".utf8))
                results.append((scenario, summary))
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
        print(json ? try Report.json(results) : Report.table(results, connections: connections))
    }

    /// Signs the users up (an existing account is fine: earlier runs seeded it).
    private func seed(_ client: BenchClient) async throws -> [SeedUser] {
        let seeded = SeedUser.make(count: users, runID: "seed")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, user) in seeded.enumerated() {
                if index >= 8 { try await group.next() }
                group.addTask {
                    let answer = try await client.postJSON(
                        "/v1/signup", ["client_id": client.clientID, "email": user.email, "password": user.password])
                    guard [201, 409].contains(answer.status) else {
                        throw BenchError.setup("seeding \(user.email) answered \(answer.status)")
                    }
                }
            }
            try await group.waitForAll()
        }
        return seeded
    }
}

extension Scenario: ExpressibleByArgument {}
