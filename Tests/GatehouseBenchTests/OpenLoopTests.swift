import GatehouseBench
import Testing

@Suite("Open-loop schedule and targets")
struct OpenLoopTests {
    @Test("Requests are due at i / rate, and a run of D seconds holds rate × D of them")
    func schedule() {
        let s = OpenLoopSchedule(rate: 400)
        #expect(s.dueMicros(0) == 0)
        #expect(s.dueMicros(1) == 2_500)
        #expect(s.dueMicros(400) == 1_000_000)
        #expect(s.requests(inMicros: 3_000_000) == 1_200)
        #expect(s.latencyMicros(4, completedMicros: 11_000) == 1_000)
        // Finished before it was due (clock granularity): never negative.
        #expect(s.latencyMicros(4, completedMicros: 9_000) == 0)
    }

    /// One connection, 100 requests/s, 1 ms service time, and one 1-second stall at request 10. Counted
    /// from when each request was due, every request queued behind the stall is charged for it: about
    /// 100 slow answers, so the p99 shows the stall. Counted from when each was sent (closed-loop
    /// style), only one answer is slow and the p99 hides it: coordinated omission.
    @Test("A stall is charged to every request it held up")
    func coordinatedOmission() {
        let schedule = OpenLoopSchedule(rate: 100)
        var fromDue = LoadStats()
        var fromSend = LoadStats()
        var free: UInt64 = 0
        for i in 0..<1_000 {
            let service: UInt64 = i == 10 ? 1_000_000 : 1_000
            let sent = max(schedule.dueMicros(i), free)
            let done = sent + service
            free = done
            fromDue.record(status: 200, microseconds: schedule.latencyMicros(i, completedMicros: done))
            fromSend.record(status: 200, microseconds: done - sent)
        }
        let due = fromDue.summary(seconds: 10)
        let send = fromSend.summary(seconds: 10)
        #expect(due.p99 > 500_000)
        #expect(send.p99 < 2_000)
        #expect(due.max >= 999_000 && send.max >= 999_000)
    }

    @Test("Each target speaks its own protocol for the same scenario")
    func targets() {
        let user = SeedUser.make(count: 1, runID: "seed")[0]
        #expect(user.email == "bench-seed-0@example.com" && user.password == "bench password 0 seed")
        let gatehouse = Target(kind: .gatehouse, clientID: "bench", confidential: ("intro", "s3cret"))
        #expect(
            gatehouse.login(user)
                == Target.Call(
                    path: "/v1/login", body: .json(["client_id": "bench", "email": user.email, "password": user.password])))
        #expect(
            gatehouse.introspect("tok")
                == Target.Call(path: "/oauth/introspect", body: .form([("token", "tok")]), basic: ("intro", "s3cret")))
        #expect(gatehouse.supported.contains(.mixed))

        var glewlwyd = Target(kind: .glewlwyd, clientID: "bench")
        glewlwyd.scope = "openid"
        #expect(
            glewlwyd.login(user)
                == Target.Call(
                    path: "/api/oidc/token",
                    body: .form([("grant_type", "password"), ("username", user.email), ("password", user.password), ("scope", "openid")])))
        #expect(glewlwyd.refresh("r1").body == .form([("grant_type", "refresh_token"), ("refresh_token", "r1")]))
        #expect(gatehouse.refresh("r1").body == .form([("grant_type", "refresh_token"), ("client_id", "bench"), ("refresh_token", "r1")]))

        let fastapi = Target(kind: .fastapiUsers, clientID: "")
        #expect(
            fastapi.login(user)
                == Target.Call(path: "/auth/jwt/login", body: .form([("username", user.email), ("password", user.password)])))
        #expect(fastapi.me("a") == Target.Call(path: "/users/me", body: .none, bearer: "a"))
        #expect(!fastapi.supported.contains(.refresh))
        #expect(fastapi.alreadyExists == [400] && gatehouse.alreadyExists == [409])
    }
}
