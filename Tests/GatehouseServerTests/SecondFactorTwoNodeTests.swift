import Foundation
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

/// The second factor's counts across nodes: the limits and single use live in the database rows both
/// nodes share.
@Suite("Second factors on two nodes")
struct SecondFactorTwoNodeTests {
    @Test(
        "MFA-10: two nodes on one PostgreSQL: 20 concurrent wrong codes on one waiting sign-in, split over both nodes, are checked exactly 5 times; one recovery code sent to both nodes at once signs in once",
        .enabled(if: TestDatabase.postgresURL != nil))
    func acrossNodes() async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let clock = ClockBox()
        try await withTwoNodes(prepare: { clock.set($0.clock) }) { one, two in
            let user = try await signUp(one, email: "nodes-\(UUID().uuidString.prefix(8))@example.com")
            let enrolled = try await one.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            // Both nodes share one test clock: pyotp makes the code for its time (a loaded run can take
            // longer than a step between starting the clock and this line).
            let testClock = try #require(clock.value)
            let code = try #require(try await SecondFactorTests.pyotp(secret, at: testClock.now()))
            let confirmed = try await two.json(
                .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": code], bearer: user.accessToken)
            let codes = try #require(confirmed.object["recovery_codes"] as? [String], "\(confirmed.text)")
            func flow(_ node: any TestClientProtocol) async throws -> String {
                let login = try await node.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
                return try #require(login.string("flow_id"), "\(login.text)")
            }

            let burst = try await flow(one)
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<20 {
                    let node = index.isMultiple(of: 2) ? one : two
                    group.addTask {
                        try await node.json(.post, "/v1/mfa/verify", ["flow_id": burst, "factor": "totp", "code": "000000"]).string("code")
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(answers.filter { $0 == "invalid_code" }.count == SecondFactorFlow.maxAttempts, "\(answers)")
            #expect(answers.filter { $0 == "flow_expired" }.count == 20 - SecondFactorFlow.maxAttempts, "\(answers)")

            let (a, b) = (try await flow(one), try await flow(two))
            let both = try await withThrowingTaskGroup(of: Int.self) { group in
                for (node, waiting) in [(one, a), (two, b)] as [(any TestClientProtocol, String)] {
                    group.addTask {
                        try await node.json(.post, "/v1/mfa/verify", ["flow_id": waiting, "factor": "recovery_code", "code": codes[0]])
                            .status.code
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(both.sorted() == [200, 401], "\(both)")
        }
    }
}

/// The test clock of the nodes, handed out of `withTwoNodes`'s preparation.
final class ClockBox: Sendable {
    private let clock = Mutex<TestClock?>(nil)
    func set(_ value: TestClock) { clock.withLock { $0 = value } }
    var value: TestClock? { clock.withLock { $0 } }
}
