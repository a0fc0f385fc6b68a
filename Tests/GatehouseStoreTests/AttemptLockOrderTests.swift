import Foundation
@testable import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Testing

/// A sign-in counts its attempt on three counters (the account from this address block, the account,
/// the address block) and later gives counts back. On PostgreSQL each of those transactions locks
/// the rows it touches: two that lock the same rows in different orders deadlock, and the database
/// ends one of them with an error. The bench's login flood found it (500s on `/v1/login`).
@Suite("Attempt counters under concurrent sign-ins")
struct AttemptLockOrderTests {
    @Test(
        "THR-1: sign-ins that begin, succeed and give back at once for one account from one address never deadlock, and every count given back is gone",
        arguments: TestDatabase.available)
    func noDeadlock(database: TestDatabase) async throws {
        try await PersistenceContractTests.withPersistence(database) { db in
            let throttle = LoginThrottle(policy: ThrottlePolicy(maxFailuresPerAccount: 1_000_000, maxFailuresPerIP: 1_000_000))
            let now = PersistenceContractTests.t0
            // Other accounts' counters, so the planner reads the table by its key as it does in service.
            try await db.transaction { stores in
                for i in 0..<300 {
                    _ = try await stores.attempts.recordFailures(keys: ["login:account:filler-\(i)"], now: now, window: 900)
                }
            }
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for task in 0..<12 {
                    group.addTask {
                        var failures: [String] = []
                        for round in 0..<25 {
                            do {
                                let attempt = try await db.transaction { stores in
                                    try await throttle.begin(email: "ada@example.com", ip: "192.0.2.7", stores: stores, now: now)
                                }
                                if (task + round) % 2 == 0 {
                                    try await db.transaction { stores in try await throttle.abandoned(attempt, stores: stores) }
                                } else {
                                    // As in a session's start: the counts go back inside a longer transaction.
                                    try await db.transaction { stores in
                                        try await throttle.succeeded(attempt, stores: stores)
                                        try await Task.sleep(for: .milliseconds(1))
                                    }
                                }
                            } catch {
                                failures.append(String(reflecting: error))
                            }
                        }
                        return failures
                    }
                }
                var all: [String] = []
                for try await failures in group { all += failures }
                return all
            }
            #expect(failures.isEmpty, "\(failures.count) of 300 sign-ins failed: \(failures.first ?? "")")
            // Every attempt was given back on the account and the address.
            for key in [LoginThrottle.accountKey("ada@example.com"), LoginThrottle.ipKey("192.0.2.7")] {
                #expect(try await db.read { try await $0.attempts.current(key: key, now: now, window: 900) }.count == 0, "\(key)")
            }
        }
    }
}
