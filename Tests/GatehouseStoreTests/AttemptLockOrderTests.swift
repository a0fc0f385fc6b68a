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

    /// Every sign-in from one address block (a NAT, an untrusted proxy, the bench's flood) used to count
    /// on the block's one row; on PostgreSQL each held that row's lock through its commit, so they went
    /// one at a time, each holding a pooled connection, and refreshes waited for connections.
    @Test(
        "THR-2: a sign-in from an address block whose counter another transaction holds locked begins and succeeds without waiting for it",
        .enabled(if: TestDatabase.postgresURL != nil))
    func addressBlockNotLocked() async throws {
        try await PersistenceContractTests.withPersistence(.postgres) { db in
            let throttle = LoginThrottle(policy: ThrottlePolicy())
            let now = PersistenceContractTests.t0
            let address = LoginThrottle.ipKey("192.0.2.7")
            let (locked, lockedNow) = AsyncStream<Void>.makeStream()
            let (done, signedIn) = AsyncStream<Void>.makeStream()
            // A failure from the block, its transaction left open until the sign-in is through, or for 60 s:
            // alone the sign-in takes under a second; with the whole suite beside a soak on two cores, 10 s
            // was once not enough for one that never waited on the row.
            async let heldUntilDone: Bool = db.transaction { stores in
                _ = try await stores.attempts.recordFailure(key: address, now: now, window: 900)
                lockedNow.yield()
                return await withTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        for await _ in done { return true }
                        return false
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(60))
                        return false
                    }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
            }
            for await _ in locked { break }
            let attempt = try await db.transaction { stores in
                try await throttle.begin(email: "grace@example.com", ip: "192.0.2.7", stores: stores, now: now)
            }
            try await db.transaction { stores in try await throttle.succeeded(attempt, stores: stores) }
            signedIn.yield()
            #expect(try await heldUntilDone, "the sign-in waited for the address block's row until the holder gave up")
            // The block keeps the failure, and only that: the success neither counted nor gave back there.
            #expect(try await db.read { try await $0.attempts.current(key: address, now: now, window: 900) }.count == 1)
        }
    }
}
