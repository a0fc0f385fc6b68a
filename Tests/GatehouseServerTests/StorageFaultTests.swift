import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// A storage that cannot take another page (SQLite's own SQLITE_FULL, as on a full disk, made by
/// capping the file at its size): writes answer 503 with `Retry-After` in each route group's shape,
/// readiness says no, the log says so once, and the same server serves again once there is room.
/// `scripts/storage-drill` does the same with a real full tmpfs, a read-only one and a stopped
/// PostgreSQL.
@Suite("Storage faults")
struct StorageFaultTests {
    @Test("ST-1: a full SQLite database answers 503 temporarily_unavailable with Retry-After, never 500; not ready; logged once")
    func fullDatabase() async throws {
        let logs = CapturedLogs()
        let server = try await TestServer.startOpen(.sqlite, logs: logs)
        try await server.withRouter { client in
            // A chain's refresh rewrites its session row in place and never needs another page; a session
            // on token rows (as beside an older node) writes one per refresh, which a full file refuses.
            server.server.services.refreshChains.set(open: false)
            let user = try await signUp(client)
            #expect(try await client.json(.get, "/health/ready").status == .ok)
            // The cap is the file's current size: the next page SQLite needs is refused.
            try await server.server.persistence.executeRaw(["PRAGMA max_page_count = 1"])

            var refused: TestResponse?
            var statuses: [Int] = []
            for n in 0..<200 where refused == nil {
                let answer = try await client.json(
                    .post, "/v1/signup",
                    ["client_id": TestServer.openClient, "email": "full-\(n)@example.com", "password": "correct horse battery"])
                statuses.append(answer.status.code)
                if answer.status == .serviceUnavailable { refused = answer }
            }
            #expect(Set(statuses).isSubset(of: [201, 503]), "\(statuses)")
            let problem = try #require(refused, "200 sign-ups fitted in a capped file: \(statuses)")
            #expect(problem.string("code") == "temporarily_unavailable")
            #expect(problem.headers[.retryAfter] == "5")
            #expect(problem.headers[.contentType] == "application/problem+json")

            // The token endpoint speaks OAuth: the same fault is its temporarily_unavailable.
            var oauth: TestResponse?
            var token = user.refreshToken
            for _ in 0..<50 where oauth == nil {
                let answer = try await refresh(client, token)
                if answer.status == .serviceUnavailable { oauth = answer } else { token = answer.string("refresh_token") ?? token }
                #expect([200, 503].contains(answer.status.code), "\(answer.text)")
            }
            let tokenAnswer = try #require(oauth, "50 refreshes fitted in a capped file")
            #expect(tokenAnswer.string("error") == "temporarily_unavailable")
            #expect(tokenAnswer.headers[.retryAfter] == "5")

            let ready = try await client.json(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.headers[.retryAfter] != nil)

            // More refusals in the same episode: none of them logs again.
            var refusals = statuses.filter { $0 == 503 }.count + 1
            for n in 0..<8 {
                let answer = try await client.json(
                    .post, "/v1/signup",
                    ["client_id": TestServer.openClient, "email": "still-full-\(n)@example.com", "password": "correct horse battery"])
                #expect([201, 503].contains(answer.status.code), "\(answer.text)")
                if answer.status == .serviceUnavailable { refusals += 1 }
            }

            // One line where an episode begins and one where it ends. A slow host can let the 5 quiet
            // seconds pass while refreshes still fit in the capped file, which ends one episode and
            // begins another: that is two lines each, never one per refused request.
            let began = logs.all.filter { $0.hasPrefix("error storage unavailable") }
            let ended = logs.all.filter { $0.hasPrefix("notice storage recovered") }
            #expect(began.count == ended.count + 1, "\(began) \(ended)")
            #expect(began.count < refusals, "\(began.count) lines for \(refusals) refusals")
            #expect(began.allSatisfy { $0.contains("storage_error=sqlite_full") }, "\(began)")
            #expect(!logs.all.contains { $0.contains("rollback failed") || $0.contains("unexpected error") })

            // Room again: the same server signs people up without a restart.
            try await server.server.persistence.executeRaw(["PRAGMA max_page_count = 1073741823"])
            #expect(
                try await client.json(
                    .post, "/v1/signup",
                    ["client_id": TestServer.openClient, "email": "after@example.com", "password": "correct horse battery"]
                ).status == .created)
        }
    }
}
