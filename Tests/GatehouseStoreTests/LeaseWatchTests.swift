import NIOCore
import Synchronization
import Testing

@testable import GatehouseStore

/// The one timer that gives up PostgreSQL leases still waiting for the pool: its rule checked at
/// chosen instants, and its timer once for real.
@Suite("Lease watch")
struct LeaseWatchTests {
    /// The storage as the watch sees it, set by each test.
    private final class Storage: Sendable {
        let lastSuccess = Atomic<UInt64>(0)
        let failing = Atomic<Bool>(false)
    }

    private final class GivenUp: Sendable {
        let count = Atomic<Int>(0)
        func callAsFunction() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    private static let second: UInt64 = 1_000_000_000

    private static func watch(_ storage: Storage, wait: TimeAmount = .seconds(5)) -> LeaseWatch {
        LeaseWatch(
            wait: wait, lastSuccess: { storage.lastSuccess.load(ordering: .relaxed) },
            failing: { storage.failing.load(ordering: .relaxed) })
    }

    @Test("LW-1: while the storage fails, a lease is given up at its wait and not before")
    func failingGivesUpAtTheWait() {
        let storage = Storage()
        storage.failing.store(true, ordering: .relaxed)
        let watch = Self.watch(storage)
        let givenUp = GivenUp()
        _ = watch.watch(now: 100 * Self.second) { givenUp() }
        #expect(watch.sweep(now: 104 * Self.second))
        #expect(givenUp.value == 0)
        #expect(!watch.sweep(now: 105 * Self.second))
        #expect(givenUp.value == 1)
        #expect(watch.count == 0)
        watch.sweep(now: 200 * Self.second)
        #expect(givenUp.value == 1)
    }

    @Test("LW-2: with nothing served meanwhile, a lease is given up at its third check, three waits in")
    func silentStorageGivesUpAtTheThirdCheck() {
        let storage = Storage()
        storage.lastSuccess.store(50 * Self.second, ordering: .relaxed)
        let watch = Self.watch(storage)
        let givenUp = GivenUp()
        _ = watch.watch(now: 100 * Self.second) { givenUp() }
        #expect(watch.sweep(now: 105 * Self.second))
        #expect(watch.sweep(now: 110 * Self.second))
        #expect(givenUp.value == 0)
        #expect(!watch.sweep(now: 115 * Self.second))
        #expect(givenUp.value == 1)
    }

    @Test("LW-3: a lease that sees others served keeps waiting; handed over, it is never given up")
    func busyPoolKeepsItsQueue() {
        let storage = Storage()
        let watch = Self.watch(storage)
        let waiting = GivenUp()
        let handed = GivenUp()
        _ = watch.watch(now: 100 * Self.second) { waiting() }
        let ticket = watch.watch(now: 100 * Self.second) { handed() }
        watch.handed(ticket)
        #expect(watch.count == 1)
        for check in 1...10 {
            storage.lastSuccess.store(UInt64(100 + 5 * check) * Self.second - 1, ordering: .relaxed)
            #expect(watch.sweep(now: UInt64(100 + 5 * check) * Self.second))
        }
        #expect(waiting.value == 0)
        // Past its third check, the first wait in which nothing was served gives it up.
        #expect(!watch.sweep(now: 155 * Self.second))
        #expect(waiting.value == 1)
        #expect(handed.value == 0)
    }

    @Test("LW-4: the timer gives up a waiting lease by itself, stops when none waits, and starts again")
    func timerRunsOnlyWhileLeasesWait() async throws {
        let storage = Storage()
        storage.failing.store(true, ordering: .relaxed)
        let watch = Self.watch(storage, wait: .milliseconds(50))
        for round in 1...2 {
            let givenUp = GivenUp()
            _ = watch.watch { givenUp() }
            let deadline = ContinuousClock.now + .seconds(120)
            while givenUp.value == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(givenUp.value == 1, "round \(round)")
            #expect(watch.count == 0)
        }
    }
}
