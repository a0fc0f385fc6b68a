import Foundation
import GatehouseCore
import Synchronization

/// A second factor for tests only: the answer `pass` completes it. Real factors (authenticator apps,
/// recovery codes) plug in the same way.
public struct TestSecondFactor: SecondFactor {
    public static let answer = "pass"

    public init() {}

    public var id: String { "test" }
    public var amr: String { "test" }

    public func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool {
        response == Self.answer
    }
}

/// Requires the test factor for the clients it names; the set can change while the server runs (an
/// operator turning the requirement on for sessions that already exist).
public final class RequireTestFactor: AssurancePolicy {
    private let clients: Mutex<Set<String>>
    /// The factor it asks for: the test factor, or a real one (`passkey`).
    private let factor: String

    public init(clients: Set<String>, factor: String = "test") {
        self.clients = Mutex(clients)
        self.factor = factor
    }

    public func require(for clientID: String) { clients.withLock { _ = $0.insert(clientID) } }

    public func requirement(
        userID: UUID, amr: [String], client: ClientRecord, asked: AssuranceLevel, stores: any Stores
    ) async throws
        -> AssuranceRequirement
    {
        clients.withLock { $0.contains(client.id) }
            ? AssuranceRequirement(level: .multiFactor, factors: [factor]) : .firstFactor
    }
}

extension InMemoryPersistence {
    /// How many app sessions, browser sessions and authorization codes exist: what a sign-in started.
    public func startedCounts() -> StartedCounts {
        let state = committedState()
        return StartedCounts(
            appSessions: state.sessions.count, browserSessions: state.browserSessions.count,
            authorizationCodes: state.codes.values.filter { $0.purpose == .authorizationCode }.count)
    }
}

public struct StartedCounts: Sendable, Hashable, CustomStringConvertible {
    public var appSessions: Int
    public var browserSessions: Int
    public var authorizationCodes: Int

    public var total: Int { appSessions + browserSessions + authorizationCodes }
    public var description: String { "app \(appSessions), browser \(browserSessions), codes \(authorizationCodes)" }
}
