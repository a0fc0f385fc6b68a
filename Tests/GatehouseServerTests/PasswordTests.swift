import Argon2
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Password change and hashing capacity")
struct PasswordTests {
    @Test("Changing the password needs the current one, ends the other sessions and queues a notice")
    func changePassword() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let a = try await signUp(client)
            let b = try await logIn(client, email: a.email, password: a.password)
            let missing = try await client.json(.put, "/v1/me/password", ["password": "a brand new secret"], bearer: a.accessToken)
            #expect(missing.status == .unprocessableContent)
            #expect((missing.object["errors"] as? [[String: Any]])?.first?["field"] as? String == "current_password")
            let wrong = try await client.json(
                .put, "/v1/me/password", ["password": "a brand new secret", "current_password": "not it at all"], bearer: a.accessToken)
            #expect(wrong.status == .unprocessableContent)
            let weak = try await client.json(
                .put, "/v1/me/password", ["password": "short", "current_password": a.password], bearer: a.accessToken)
            #expect(weak.status == .unprocessableContent)
            let ok = try await client.json(
                .put, "/v1/me/password", ["password": "a brand new secret", "current_password": a.password], bearer: a.accessToken)
            #expect(ok.status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: a.accessToken).status == .ok)
            #expect(try await client.json(.get, "/v1/me", bearer: b.accessToken).status == .unauthorized)
            let old = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": a.email, "password": a.password])
            #expect(old.status == .unauthorized)
            _ = try await logIn(client, email: a.email, password: "a brand new secret")
            let kinds = try await server.persistence.read { try await $0.outbox.list(status: nil, limit: 10) }.map(\.kind)
            #expect(kinds.contains("password_changed"))
        }
    }

    @Test("Profile updates merge and are validated field by field")
    func profileUpdate() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let a = try await signUp(client)
            let first = try await client.json(
                .patch, "/v1/me", ["profile": ["given_name": "Ada", "birthdate": "1815-12-10"]], bearer: a.accessToken)
            #expect(first.status == .unprocessableContent)  // before 1850 is rejected as implausible, and the message says so
            let birthdateError = (first.object["errors"] as? [[String: Any]])?.first { $0["field"] as? String == "profile.birthdate" }
            #expect((birthdateError?["message"] as? String)?.contains("1850-01-01") == true, "\(first.text)")
            let ok = try await client.json(
                .patch, "/v1/me",
                [
                    "profile": ["given_name": "Ada", "birthdate": "1990-02-28", "metadata": ["tier": "gold"] as [String: String]]
                        as [String: any Sendable]
                ], bearer: a.accessToken)
            #expect(ok.status == .ok)
            let second = try await client.json(.patch, "/v1/me", ["profile": ["family_name": "Lovelace"]], bearer: a.accessToken)
            let profile = try #require(second.object["profile"] as? [String: Any])
            #expect(profile["given_name"] as? String == "Ada")
            #expect(profile["family_name"] as? String == "Lovelace")
            #expect((profile["metadata"] as? [String: Any])?["tier"] as? String == "gold")
            let bad = try await client.json(.patch, "/v1/me", ["profile": ["birthdate": "2023-02-30"]], bearer: a.accessToken)
            #expect((bad.object["errors"] as? [[String: Any]])?.first?["field"] as? String == "profile.birthdate")
        }
    }

    @Test("When the hashing queue is full, logins get 503 with Retry-After instead of waiting without bound")
    func hashingBackpressure() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.hashingThreads = 1
            $0.hashingQueue = 0
            $0.argon2 = .init(memoryKiB: 8192, iterations: 3, parallelism: 1)
            $0.maxFailuresPerAccount = 1000
            $0.maxFailuresPerIP = 1000
        }
        try await server.withRouter { client in
            let user = try await signUp(client)
            @Sendable func twelveAtOnce() async throws -> [(Int, String?)] {
                try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<12 {
                        group.addTask {
                            let r = try await client.json(
                                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
                            return (Int(r.status.code), r.headers[.retryAfter])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // While a sign-in holds the only place, every one is refused at once.
            let busy = try await server.services.hasher.whilePlaceHeld { try await twelveAtOnce() }
            #expect(busy.allSatisfy { $0.0 == 503 && $0.1 != nil }, "\(busy)")
            // Once it is free, twelve at once: at least the first through signs in; none waits or fails otherwise.
            let statuses = try await twelveAtOnce()
            #expect(statuses.contains { $0.0 == 200 })
            #expect(statuses.allSatisfy { $0.0 == 200 || ($0.0 == 503 && $0.1 != nil) }, "\(statuses.map(\.0))")
        }
    }

    @Test(
        "CAP-1: a sign-in the hashing pool has no place for is refused with 503 before it counts, reads or writes anything; once the place is free it signs in"
    )
    func refusedBeforeAnything() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.hashingThreads = 1
            $0.hashingQueue = 0
        }
        let counter = server.server.persistence.statements
        let cache = server.services.clientCache
        try await server.withRouter { client in
            let user = try await signUp(client)
            #expect(try await LoginThrottleTests.right(client, user) == 200)
            // The fewest statements of three refused sign-ins: the server's own background work
            // (housekeeping, the outbox) may run beside one; the client's cached record is not the path's.
            let fewest = try await server.services.hasher.whilePlaceHeld {
                var fewest = Int.max
                for _ in 0..<3 {
                    let (before, loads) = (counter.value, cache.loads)
                    let refused = try await client.json(
                        .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
                    #expect(refused.status == .serviceUnavailable, "\(refused.text)")
                    #expect(refused.headers[.retryAfter] == "1")
                    fewest = min(fewest, counter.value - before - (cache.loads - loads))
                }
                return fewest
            }
            #expect(fewest == 0, "a refused sign-in sent \(fewest) statements")
            #expect(try await LoginThrottleTests.right(client, user) == 200)
        }
    }
}
