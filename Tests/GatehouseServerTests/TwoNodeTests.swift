import Foundation
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Two nodes on one PostgreSQL")
struct TwoNodeTests {
    @Test(
        "Sign up on one node, log in on the other, each accepts the other's tokens; 50 refreshes of one token split over both make one successor and the session lives",
        .enabled(if: TestDatabase.postgresURL != nil))
    func sharedSessions() async throws {
        try await withTwoNodes { one, two in
            let user = try await signUp(one)
            let again = try await logIn(two, email: user.email, password: user.password)
            #expect(try await one.json(.get, "/v1/me", bearer: again.accessToken).status == .ok)
            #expect(try await two.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)

            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<50 {
                    let node: any TestClientProtocol = index.isMultiple(of: 2) ? one : two
                    group.addTask { try await refresh(node, again.refreshToken) }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == .ok }, "\(answers.map(\.status.code))")
            let successors = Set(answers.compactMap { $0.string("refresh_token") })
            #expect(successors.count == 1)
            let next = try await refresh(two, try #require(successors.first))
            #expect(next.status == .ok)
            #expect(try await one.json(.get, "/v1/me", bearer: next.string("access_token")).status == .ok)
        }
    }
}
