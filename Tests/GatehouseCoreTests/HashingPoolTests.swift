import Argon2
import GatehouseCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Hashing pool")
struct HashingPoolTests {
    #if os(Linux)
        @Test("Hashing threads run at nice +10 while the caller's thread keeps its priority")
        func lowerPriority() async throws {
            let pool = HashingPool(threads: 1, maxQueued: 1)
            let callerBefore = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            let inPool = try await pool.run { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            await pool.shutdown()
            #expect(inPool == 10)
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == callerBefore)
        }
    #endif

    @Test(
        "HP-2: a hash through the pool leaves its workspace holding the block for the next one; trimming gives back only what has been idle long enough, and shutdown gives back everything"
    )
    func workspaces() async throws {
        let pool = HashingPool(threads: 1, maxQueued: 4)
        let hasher = try PasswordHasher(parameters: Argon2Parameters(memoryKiB: 1024, iterations: 1, parallelism: 1), pool: pool)
        let stored = try await hasher.hash("correct horse")
        #expect(try await hasher.verify("correct horse", against: stored) == .match(rehash: nil))
        #expect(try await hasher.verify("wrong horse", against: stored) == .mismatch)
        #expect(pool.trim(olderThan: .seconds(3600)) == 1024 * 1024, "one thread, one block kept")
        #expect(pool.trim(olderThan: .zero) == 0, "idle for at least zero: given back")
        // The next hash maps a block again and keeps it.
        #expect(try await hasher.verify("correct horse", against: stored) == .match(rehash: nil))
        #expect(pool.trim(olderThan: .seconds(3600)) == 1024 * 1024)
        await pool.shutdown()
        #expect(pool.trim(olderThan: .seconds(3600)) == 0)
    }
}
