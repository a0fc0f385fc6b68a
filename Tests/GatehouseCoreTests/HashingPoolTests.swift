import GatehouseCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Hashing pool")
struct HashingPoolTests {
    #if os(Linux)
        @Test("Hashing threads run under SCHED_IDLE while the caller's thread keeps its policy")
        func lowerPriority() async throws {
            let pool = HashingPool(threads: 1, maxQueued: 1)
            let callerBefore = sched_getscheduler(0)
            let inPool = try await pool.run { sched_getscheduler(0) }
            await pool.shutdown()
            #expect(inPool == HashingPool.idlePolicy)
            #expect(sched_getscheduler(0) == callerBefore)
            #expect(callerBefore != HashingPool.idlePolicy)
        }
    #endif
}
