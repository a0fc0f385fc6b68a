import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Runs one scenario: `connections` virtual users, each on its own connection. Closed-loop, each sends
/// its next request when the previous one answered; open-loop (`rate`), requests are due on a fixed
/// schedule whatever the server does, and their latency counts from when they were due.
public struct LoadRunner: Sendable {
    public var client: BenchClient
    public var target: Target
    public var connections: Int
    public var duration: Double
    public var users: [SeedUser]
    /// Open-loop rate for the scenario (requests/s); `nil` is closed-loop.
    public var rate: Double?
    /// For `mixed`: the login flood's open-loop rate and the connections it may use.
    public var loginRate: Double
    public var loginConnections: Int
    /// For `social`: the provider whose tokens the virtual users present.
    public var identityProvider: BenchIdentityProvider?
    /// For `login-totp`: the accounts with an authenticator app, each signed in once.
    public var totpUsers: [BenchTOTPUser] = []

    public init(
        client: BenchClient, target: Target, connections: Int, duration: Double, users: [SeedUser], rate: Double? = nil,
        loginRate: Double = 200, loginConnections: Int = 64, identityProvider: BenchIdentityProvider? = nil
    ) {
        self.identityProvider = identityProvider
        self.client = client
        self.target = target
        self.connections = connections
        self.duration = duration
        self.users = users
        self.rate = rate
        self.loginRate = loginRate
        self.loginConnections = loginConnections
    }

    /// One figure row: a scenario, or one half of `mixed`.
    public struct Row: Sendable {
        public var label: String
        public var connections: Int
        public var rate: Double?
        public var summary: LoadSummary
    }

    public func run(_ scenario: Scenario, progress: (@Sendable (Int) -> Void)? = nil) async throws -> [Row] {
        guard target.supported.contains(scenario) else {
            throw BenchError.setup("\(target.kind.rawValue) has no \(scenario.rawValue) scenario")
        }
        let counter = ProgressCounter()
        let reporter = Task {
            while !Task.isCancelled {
                guard (try? await Task.sleep(for: .seconds(1))) != nil else { break }
                progress?(counter.value)
            }
        }
        defer { reporter.cancel() }
        if scenario == .mixed {
            async let refreshes = phase(.refresh, connections: connections, rate: rate, counter: counter)
            async let logins = phase(.login, connections: loginConnections, rate: loginRate, counter: counter)
            let (r, l) = try await (refreshes, logins)
            return [
                Row(label: "mixed: refresh", connections: connections, rate: rate, summary: r),
                Row(label: "mixed: login flood", connections: loginConnections, rate: loginRate, summary: l),
            ]
        }
        let summary = try await phase(scenario, connections: connections, rate: rate, counter: counter)
        return [Row(label: scenario.rawValue, connections: connections, rate: rate, summary: summary)]
    }

    private func phase(_ scenario: Scenario, connections: Int, rate: Double?, counter: ProgressCounter) async throws -> LoadSummary {
        let schedule = rate.map(OpenLoopSchedule.init)
        let tickets = Tickets()
        // Sessions are set up before the clock starts: sign-ins are not part of a refresh's figures.
        let sessions = try await withThrowingTaskGroup(of: (Int, Session?).self) { group in
            for worker in 0..<connections {
                group.addTask { (worker, try await self.session(for: worker, scenario)) }
            }
            var all = [Session?](repeating: nil, count: connections)
            for try await (worker, session) in group { all[worker] = session }
            return all
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(duration * 1000))
        let merged = try await withThrowingTaskGroup(of: LoadStats.self) { group in
            for worker in 0..<connections {
                group.addTask {
                    try await self.worker(
                        worker, scenario, session: sessions[worker], start: start, deadline: deadline, schedule: schedule,
                        tickets: tickets, counter: counter)
                }
            }
            var total = LoadStats()
            for try await stats in group { total.merge(stats) }
            return total
        }
        return merged.summary(seconds: Self.seconds(ContinuousClock.now - start))
    }

    struct Session: Sendable {
        var access: String
        var chain: RefreshChain?
        var device: BenchDevice?
        /// The `gh_session` cookie of a signed-in browser (`authorize`).
        var browserCookie: String?
        /// The key the session is bound to (`refresh-dpop`, `me-dpop`).
        var dpopKey: BenchDPoPKey?
        /// The device code a TV polls with (`device-poll`).
        var deviceCode: String?
        /// The registered passkey (`passkey`).
        var passkey: BenchPasskey?
        /// The identity whose provider token is read (`provider-token`).
        var identityID: String?
    }

    private func session(for worker: Int, _ scenario: Scenario) async throws -> Session? {
        if scenario == .devicePoll {
            let started = try await client.send(target.deviceAuthorization())
            guard let code = started.string("device_code") else {
                throw BenchError.setup("device authorization answered \(started.status): \(String(buffer: started.body).prefix(200))")
            }
            return Session(access: "", deviceCode: code)
        }
        if scenario == .providerToken { return try await providerSession(worker) }
        guard [.refresh, .introspect, .me, .device, .authorize, .refreshDPoP, .meDPoP, .tokenExchange, .passkey].contains(scenario)
        else {
            return nil
        }
        let user = users[worker % max(1, users.count)]
        // A DPoP scenario signs in with a proof, so the session's tokens are bound to its key.
        let dpopKey: BenchDPoPKey? = [.refreshDPoP, .meDPoP].contains(scenario) ? BenchDPoPKey() : nil
        func signIn() async throws -> BenchClient.Answer {
            guard let dpopKey else { return try await client.send(target.login(user)) }
            let call = target.login(user)
            return try await client.send(target.withProof(call, try dpopKey.proof(method: "POST", url: client.baseURL + call.path)))
        }
        // Set-up is not measured: a sign-in refused for load (5xx, 429; Glewlwyd's SQLite answers 500
        // when its database is busy) is retried a few times before the run gives up.
        var login = try await signIn()
        for attempt in 1...5 where login.status >= 500 || login.status == 429 {
            try await Task.sleep(for: .milliseconds(100 * attempt))
            login = try await signIn()
        }
        if dpopKey != nil, login.string("token_type") != "DPoP" {
            throw BenchError.setup("a sign-in with a DPoP proof answered token_type \(login.string("token_type") ?? "none")")
        }
        guard let access = login.string("access_token") else {
            throw BenchError.setup("sign-in for \(scenario.rawValue) answered \(login.status): \(String(buffer: login.body).prefix(200))")
        }
        let refresh = login.string("refresh_token")
        if scenario == .refresh || scenario == .refreshDPoP, refresh == nil { throw BenchError.setup("sign-in answered no refresh token") }
        var device: BenchDevice?
        if scenario == .device {
            var made = BenchDevice(worker: worker)
            let registered = try await client.send(
                target.registerDevice(deviceID: made.deviceID, publicKey: made.publicKey, access: access))
            guard let id = registered.string("id") else {
                throw BenchError.setup("device registration answered \(registered.status): \(String(buffer: registered.body).prefix(200))")
            }
            made.authenticatorID = id
            device = made
        }
        var passkey: BenchPasskey?
        if scenario == .passkey { passkey = try await registerPasskey(access: access) }
        var browserCookie: String?
        if scenario == .authorize {
            // The browser signs in the way an app hands its user to the web: a one-time web-session URL.
            let created = try await client.send(target.webSession(access: access))
            guard let url = created.string("url") else {
                throw BenchError.setup("web-session answered \(created.status): \(String(buffer: created.body).prefix(200))")
            }
            // The URL names the server's public address; the bench talks to the address it was given.
            let path = URLComponents(string: url).map { $0.percentEncodedPath + "?" + ($0.percentEncodedQuery ?? "") } ?? url
            let opened = try await client.get(path)
            guard let cookie = opened.headers["set-cookie"].first(where: { $0.hasPrefix("gh_session=") })?.split(separator: ";").first
            else {
                throw BenchError.setup("web-session link answered \(opened.status) without a browser session")
            }
            browserCookie = String(cookie)
        }
        return Session(
            access: access, chain: refresh.map(RefreshChain.init), device: device, browserCookie: browserCookie, dpopKey: dpopKey,
            passkey: passkey)
    }

    private func worker(
        _ index: Int, _ scenario: Scenario, session: Session?, start: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
        schedule: OpenLoopSchedule?, tickets: Tickets, counter: ProgressCounter
    ) async throws -> LoadStats {
        var stats = LoadStats()
        var session = session
        var sequence = 0
        var reported = false
        while true {
            sequence += 1
            var ticket = 0
            let began: ContinuousClock.Instant
            if let schedule {
                ticket = tickets.next()
                let due = start + .microseconds(schedule.dueMicros(ticket))
                guard due < deadline else { break }
                try? await Task.sleep(until: due, clock: .continuous)
                began = due
            } else {
                began = ContinuousClock.now
                guard began < deadline else { break }
            }
            do {
                // Open-loop tickets spread logins over every user; closed-loop workers walk their own stride.
                let pick = schedule != nil ? ticket : index + sequence * 7919
                if scenario == .loginTOTP {
                    // Each account's step is spent once it signs in: a run ends when the pool does.
                    let index = tickets.next()
                    guard index < totpUsers.count else { break }
                    let answer = try await totpSignIn(totpUsers[index])
                    stats.record(status: answer.status, microseconds: Self.micros(ContinuousClock.now - began))
                    if answer.status >= 400, !reported {
                        reported = true
                        FileHandle.standardError.write(
                            Data("\nunexpected \(answer.status) in login-totp: \(String(buffer: answer.body).prefix(300))\n".utf8))
                    }
                    counter.add(1)
                    continue
                }
                let answer =
                    if scenario == .device {
                        try await deviceSignIn(session!.device!)
                    } else if scenario == .passkey {
                        try await passkeySignIn(session!.passkey!)
                    } else if scenario == .authorize {
                        try await hostedSignIn(cookie: session!.browserCookie!)
                    } else {
                        try await client.send(try call(for: scenario, pick: pick, session: session))
                    }
                if scenario == .refresh || scenario == .refreshDPoP, answer.status == 200 {
                    try advance(&session, with: answer)
                }
                let finished = ContinuousClock.now
                let micros: UInt64 =
                    if let schedule {
                        schedule.latencyMicros(ticket, completedMicros: Self.micros(finished - start))
                    } else {
                        Self.micros(finished - began)
                    }
                let expected = scenario.isExpected(answer)
                stats.record(status: answer.status, microseconds: micros, expected: expected)
                // The first unexpected refusal of each worker, with its body, for diagnosis (503 and 429
                // are the load shedding a flood is meant to meet).
                if answer.status >= 400, answer.status != 503, answer.status != 429, !expected, !reported {
                    reported = true
                    FileHandle.standardError.write(
                        Data("\nunexpected \(answer.status) in \(scenario.rawValue): \(String(buffer: answer.body).prefix(300))\n".utf8))
                }
            } catch let error as BenchError {
                throw error
            } catch {
                stats.recordTransportError()
            }
            counter.add(1)
        }
        return stats
    }

    private func call(for scenario: Scenario, pick: Int, session: Session?) throws -> Target.Call {
        switch scenario {
        case .login: return target.login(users[pick % users.count])
        case .refresh: return target.refresh(session!.chain!.token)
        case .introspect: return target.introspect(session!.access)
        case .jwks: return target.jwks
        case .me: return target.me(session!.access)
        case .refreshDPoP:
            let call = target.refresh(session!.chain!.token)
            return target.withProof(call, try session!.dpopKey!.proof(method: "POST", url: client.baseURL + call.path))
        case .meDPoP:
            let access = session!.access
            return target.withProof(
                target.me(access), try session!.dpopKey!.proof(method: "GET", url: client.baseURL + target.mePath, accessToken: access),
                boundToken: access)
        case .clientCredentials: return target.clientCredentials()
        case .devicePoll: return target.devicePoll(deviceCode: session!.deviceCode!)
        case .tokenExchange: return target.tokenExchange(subjectToken: session!.access)
        case .providerToken: return target.providerToken(identityID: session!.identityID!, access: session!.access)
        case .signup: return target.signup(email: "signup-\(UUID().uuidString.lowercased())@example.com", password: "load generator signup")
        case .anonymous: return target.anonymous()
        case .social:
            guard let identityProvider else { throw BenchError.setup("the social scenario needs --social-key") }
            let (token, nonce) = try identityProvider.mint(pick: pick, subjects: users.count)
            return target.socialToken(provider: BenchIdentityProvider.providerID, idToken: token, nonce: nonce)
        case .socialAccess:
            // The bench's provider answers for any token of this shape: subject N of the seeded count.
            return target.socialAccessToken(
                provider: BenchIdentityProvider.accessProviderID, accessToken: "bench-gh-\(pick % max(1, users.count))")
        case .mixed: preconditionFailure("mixed runs as two phases")
        case .device: preconditionFailure("device runs as two calls")
        case .loginTOTP: preconditionFailure("login-totp runs as two calls")
        case .authorize: preconditionFailure("authorize runs as two calls")
        case .passkey: preconditionFailure("passkey runs as two calls")
        }
    }

    /// Follows the chain; Gatehouse must always rotate, a peer that does not rotate keeps its token.
    private func advance(_ session: inout Session?, with answer: BenchClient.Answer) throws {
        guard var current = session, var chain = current.chain else { return }
        let successor = answer.string("refresh_token")
        if !chain.advance(with: successor), target.kind == .gatehouse {
            throw BenchError.setup("refresh answer without a new token")
        }
        current.chain = chain
        if let access = answer.string("access_token") { current.access = access }
        session = current
    }

    static func micros(_ d: Duration) -> UInt64 {
        UInt64(max(0, d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000))
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// Hands out open-loop request numbers across workers.
final class Tickets: Sendable {
    private let issued = Atomic<Int>(0)
    func next() -> Int { issued.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// Requests done so far, for the progress line.
final class ProgressCounter: Sendable {
    private let done = Atomic<Int>(0)
    func add(_ n: Int) { done.wrappingAdd(n, ordering: .relaxed) }
    var value: Int { done.load(ordering: .relaxed) }
}

public enum BenchError: Error, CustomStringConvertible {
    case setup(String)
    public var description: String {
        switch self {
        case .setup(let why): "bench set-up failed: \(why)"
        }
    }
}

extension Scenario {
    /// The answer the scenario is after when it is not a 2xx: a poll before approval is refused by design.
    func isExpected(_ answer: BenchClient.Answer) -> Bool {
        guard self == .devicePoll, answer.status == 400 else { return false }
        return ["authorization_pending", "slow_down"].contains(answer.string("error") ?? "")
    }
}
