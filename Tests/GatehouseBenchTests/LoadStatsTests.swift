import GatehouseBench
import Testing

@Suite("Load generator logic")
struct LoadStatsTests {
    @Test("Latency percentiles and throughput count only what succeeded")
    func accounting() {
        var a = LoadStats()
        for micros in 1...90 { a.record(status: 200, microseconds: UInt64(micros) * 1000) }
        var b = LoadStats()
        for _ in 0..<10 { b.record(status: 503, microseconds: 500_000) }
        b.recordTransportError()
        a.merge(b)
        let summary = a.summary(seconds: 2)
        #expect(summary.requests == 100)
        #expect(summary.successes == 90)
        #expect(summary.transportErrors == 1)
        #expect(summary.throughput == 45)
        #expect(summary.statuses == [200: 90, 503: 10])
        // HDR with 3 significant digits: within 0.1 %.
        #expect((49_950...50_050).contains(summary.p50))
        #expect((499_500...500_500).contains(summary.p99))
        #expect((499_500...500_500).contains(summary.max))
    }

    @Test("A device poll's authorization_pending counts as what the scenario asked for; other refusals do not")
    func expectedRefusals() {
        var a = LoadStats()
        for _ in 0..<8 { a.record(status: 400, microseconds: 1000, expected: true) }
        a.record(status: 400, microseconds: 1000)
        a.record(status: 200, microseconds: 1000, expected: true)
        var b = LoadStats()
        b.record(status: 400, microseconds: 1000, expected: true)
        a.merge(b)
        let summary = a.summary(seconds: 1)
        #expect(summary.requests == 11)
        #expect(summary.successes == 10)
        #expect(summary.statuses == [400: 10, 200: 1])
    }

    @Test("An empty run reports zeros instead of garbage")
    func empty() {
        let summary = LoadStats().summary(seconds: 0)
        #expect(summary.requests == 0 && summary.p99 == 0 && summary.throughput == 0)
    }

    @Test("A refresh chain follows each successor and refuses a missing or repeated one")
    func refreshChain() {
        var chain = RefreshChain(token: "gh_r_a")
        let first = chain.advance(with: "gh_r_b")
        #expect(first)
        #expect(chain.token == "gh_r_b")
        let missing = chain.advance(with: nil)
        let repeated = chain.advance(with: "gh_r_b")
        let empty = chain.advance(with: "")
        #expect(!missing && !repeated && !empty)
        #expect(chain.rotations == 1)
    }

    @Test("Seed users are distinct and stable per run id")
    func seeds() {
        let users = SeedUser.make(count: 50, runID: "x")
        #expect(Set(users).count == 50)
        #expect(users == SeedUser.make(count: 50, runID: "x"))
    }
}
