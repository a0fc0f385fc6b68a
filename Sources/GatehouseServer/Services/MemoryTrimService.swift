import ServiceLifecycle

/// Gives the allocator's free pages back to the system every minute (``AllocatorPolicy/trim()``), so
/// a node's RSS follows its live memory instead of the high-water mark of its arenas.
struct MemoryTrimService: Service {
    let interval: Duration

    func run() async throws {
        await runEvery(interval) { AllocatorPolicy.trim() }
    }
}
