import Dispatch
import Foundation
import Logging
import NIOCore
import PostgresKit
import PostgresNIO
import Synchronization
import Testing

@testable import GatehouseStore

/// A PostgreSQL lease's hand-over and give-up exclude each other: a given-up lease never runs its
/// work, and the watch never cancels work the pool handed over.
@Suite("Lease state")
struct LeaseStateTests {
    @Test("LW-5: hand-over and give-up exclude each other, in either order and when they race")
    func handOverAndGiveUpExclude() async {
        let handedFirst = LeaseState()
        #expect(handedFirst.hand())
        #expect(!handedFirst.giveUp())
        #expect(handedFirst.isHanded && !handedFirst.isGivenUp)

        let givenUpFirst = LeaseState()
        #expect(givenUpFirst.giveUp())
        #expect(!givenUpFirst.hand())
        #expect(givenUpFirst.isGivenUp && !givenUpFirst.isHanded)

        // Both sides at once, on two threads, many times: exactly one wins every race. (On this two-core
        // host the give-up won about 4 % of them, so both orders were run.)
        for _ in 0..<4_000 {
            let state = LeaseState()
            let (handed, gaveUp) = await withTaskGroup(of: (Bool, Bool).self) { group in
                group.addTask { (state.hand(), false) }
                group.addTask { (false, state.giveUp()) }
                var result = (false, false)
                for await (handed, gaveUp) in group { result = (result.0 || handed, result.1 || gaveUp) }
                return result
            }
            #expect(handed != gaveUp)
            #expect(state.isHanded == handed && state.isGivenUp == gaveUp)
        }
    }

    /// Opened to let the holder's work go; how often work ran; whether the storage counts as failing.
    private final class Gate: Sendable {
        let open = Atomic<Bool>(false)
        let ran = Atomic<Int>(0)
        let failing = Atomic<Bool>(false)
    }

    @Test(
        "LW-6: on PostgreSQL, a lease given up while the only connection is busy never runs its work, and the connection serves the next lease"
    )
    func givenUpLeaseNeverRuns() async throws {
        guard let url = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"] else {
            print("skipped: set GATEHOUSE_TEST_POSTGRES_URL to run the PostgreSQL lease test")
            return
        }
        let core = try SQLPostgresConfiguration(url: url).coreConfiguration
        var configuration = PostgresClient.Configuration(
            host: try #require(core.host), port: try #require(core.port), username: core.username,
            password: core.password, database: core.database, tls: .disable)
        configuration.options.maximumConnections = 1
        let logger = {
            var logger = Logger(label: "lease")
            logger.logLevel = .critical
            return logger
        }()
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        // Healthy (statements succeeding) while the holder connects, however long that takes on a busy
        // machine; failing once it holds the connection, so a lease waiting then is given up at its wait.
        let gate = Gate()
        let watch = LeaseWatch(
            wait: .milliseconds(200),
            lastSuccess: { gate.failing.load(ordering: .sequentiallyConsistent) ? 0 : DispatchTime.now().uptimeNanoseconds },
            failing: { gate.failing.load(ordering: .sequentiallyConsistent) })
        defer { gate.open.store(true, ordering: .sequentiallyConsistent) }
        let deadline = ContinuousClock.now + .seconds(60)

        let holder = Task {
            try await PostgresLease.with(client, watch: watch) { connection in
                gate.ran.add(1, ordering: .sequentiallyConsistent)
                while !gate.open.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                return try await connection.query("SELECT 1", logger: logger).collect().count
            }
        }
        while gate.ran.load(ordering: .sequentiallyConsistent) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(gate.ran.load(ordering: .sequentiallyConsistent) == 1, "the holder never got the connection")
        gate.failing.store(true, ordering: .sequentiallyConsistent)

        // Given up while the holder still holds the connection (it lets go only below): had the lease
        // waited for it instead, it would have run its work and not thrown.
        await #expect(throws: LeaseTimedOut.self) {
            try await PostgresLease.with(client, watch: watch) { _ in
                gate.ran.add(100, ordering: .sequentiallyConsistent)
            }
        }
        gate.open.store(true, ordering: .sequentiallyConsistent)
        #expect(try await holder.value == 1)

        // The given-up lease's work never ran, and the connection came back to the pool.
        let next = try await PostgresLease.with(client, watch: watch) { connection in
            try await connection.query("SELECT 2", logger: logger).collect().count
        }
        #expect(next == 1)
        #expect(gate.ran.load(ordering: .sequentiallyConsistent) == 1)
        #expect(watch.count == 0)
    }
}
