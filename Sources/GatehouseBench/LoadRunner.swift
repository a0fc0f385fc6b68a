import AsyncHTTPClient
import Foundation

/// Runs one scenario closed-loop: `connections` virtual users, each sending its next request when the
/// previous one answered, for `duration` seconds.
public struct LoadRunner: Sendable {
    public var client: BenchClient
    public var connections: Int
    public var duration: Double
    public var users: [SeedUser]
    /// Confidential client for introspection.
    public var introspectionCredentials: (String, String)?

    public init(client: BenchClient, connections: Int, duration: Double, users: [SeedUser], introspectionCredentials: (String, String)?) {
        self.client = client
        self.connections = connections
        self.duration = duration
        self.users = users
        self.introspectionCredentials = introspectionCredentials
    }

    public func run(_ scenario: Scenario, progress: (@Sendable (Int) -> Void)? = nil) async throws -> LoadSummary {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(duration * 1000))
        let counter = ProgressCounter()
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                progress?(await counter.value)
            }
        }
        defer { reporter.cancel() }
        let merged = try await withThrowingTaskGroup(of: LoadStats.self) { group in
            for worker in 0..<connections {
                group.addTask { try await self.worker(worker, scenario, deadline: deadline, counter: counter) }
            }
            var total = LoadStats()
            for try await stats in group { total.merge(stats) }
            return total
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return merged.summary(seconds: seconds)
    }

    private func worker(_ index: Int, _ scenario: Scenario, deadline: ContinuousClock.Instant, counter: ProgressCounter) async throws -> LoadStats {
        var stats = LoadStats()
        let user = users[index % max(1, users.count)]
        // Per-worker set-up, not timed.
        var session: (access: String, chain: RefreshChain)?
        if scenario != .login && scenario != .jwks && scenario != .signup {
            let login = try await client.postJSON("/v1/login", ["client_id": client.clientID, "email": user.email, "password": user.password])
            guard let access = login.string("access_token"), let refresh = login.string("refresh_token") else {
                throw BenchError.setup("login for \(scenario) failed with \(login.status)")
            }
            session = (access, RefreshChain(token: refresh))
        }
        var sequence = 0
        while ContinuousClock.now < deadline {
            sequence += 1
            let began = ContinuousClock.now
            do {
                let answer: BenchClient.Answer
                switch scenario {
                case .login:
                    let u = users[(index + sequence * connections) % users.count]
                    answer = try await client.postJSON("/v1/login", ["client_id": client.clientID, "email": u.email, "password": u.password])
                case .refresh:
                    answer = try await client.postForm(
                        "/oauth/token", [("grant_type", "refresh_token"), ("client_id", client.clientID), ("refresh_token", session!.chain.token)])
                    if answer.status == 200, !session!.chain.advance(with: answer.string("refresh_token")) {
                        throw BenchError.setup("refresh answer without a new token")
                    }
                case .introspect:
                    guard let credentials = introspectionCredentials else { throw BenchError.setup("introspection needs --introspect-client") }
                    answer = try await client.postForm("/oauth/introspect", [("token", session!.access)], basic: credentials)
                case .jwks:
                    answer = try await client.get("/.well-known/jwks.json")
                case .me:
                    answer = try await client.get("/v1/me", bearer: session!.access)
                case .signup:
                    answer = try await client.postJSON(
                        "/v1/signup",
                        ["client_id": client.clientID, "email": "signup-\(UUID().uuidString.lowercased())@example.com", "password": "bench password signup"])
                }
                let elapsed = ContinuousClock.now - began
                stats.record(status: answer.status, microseconds: UInt64(max(0, elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)))
            } catch let error as BenchError {
                throw error
            } catch {
                stats.recordTransportError()
            }
            if sequence % 64 == 0 { await counter.add(64) }
        }
        return stats
    }
}

actor ProgressCounter {
    private(set) var value = 0
    func add(_ n: Int) { value += n }
}

public enum BenchError: Error, CustomStringConvertible {
    case setup(String)
    public var description: String {
        switch self { case .setup(let why): "bench set-up failed: \(why)" }
    }
}
