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
}
