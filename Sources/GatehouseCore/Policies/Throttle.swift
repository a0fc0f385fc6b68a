import Foundation
import GatehouseAPI

/// Limits on failed attempts, counted in the database so that every node shares them.
public struct ThrottlePolicy: Sendable, Hashable {
    /// Failed sign-ins to one account from one address block in one window before that pair answers
    /// 429. Per pair, so a stranger's guesses lock out the stranger, not the owner on their own network.
    public var maxFailuresPerAccount: Int
    /// Failures per client address block in one window, across accounts (higher: many users can share
    /// one NAT).
    public var maxFailuresPerIP: Int
    /// The backstop: failures per account from every address together (a guessing botnet).
    public var maxFailuresPerAccountTotal: Int
    public var window: TimeInterval

    public init(
        maxFailuresPerAccount: Int = 10, maxFailuresPerIP: Int = 50, maxFailuresPerAccountTotal: Int = 100,
        window: TimeInterval = 15 * 60
    ) {
        self.maxFailuresPerAccount = maxFailuresPerAccount
        self.maxFailuresPerIP = maxFailuresPerIP
        self.maxFailuresPerAccountTotal = max(maxFailuresPerAccountTotal, maxFailuresPerAccount)
        self.window = window
    }
}

/// One counted sign-in attempt, to be settled when it succeeds (a failure stays counted).
public struct LoginAttempt: Sendable {
    /// The pair's and the account's counters, counted before the check.
    let keys: [String]
    let pairKey: String
    /// The address block's counter, counted only when the attempt fails.
    let addressKey: String?
}

/// Login throttling on top of the attempt store.
public struct LoginThrottle: Sendable {
    public let policy: ThrottlePolicy

    public init(policy: ThrottlePolicy) { self.policy = policy }

    /// Every failure for the account, from anywhere: the backstop.
    static func accountKey(_ email: String) -> String { "login:account:" + Secrets.sha256Hex(email) }
    static func ipKey(_ ip: String) -> String { "login:ip:" + AddressBlock.of(ip) }
    /// The account from one address block (no address: one shared block).
    static func pairKey(_ email: String, ip: String?) -> String {
        "login:pair:" + Secrets.sha256Hex(email) + ":" + (ip.map(AddressBlock.of) ?? "-")
    }

    /// Counts the attempt on the pair and the account *before* anything is checked (count, then
    /// compare): however many arrive at once, on however many nodes, at most the limit are ever
    /// checked against one account. Past a limit it throws 429; call it inside a transaction, so that
    /// refusal rolls the counts back and a refused attempt is not a failure.
    ///
    /// The address block is only read here and counted by ``failed(_:stores:now:)``. Every sign-in from one
    /// block (a NAT, a proxy whose `X-Forwarded-For` is not trusted, a load test) would otherwise
    /// count on one row: on PostgreSQL each holds that row's lock through its commit, so sign-ins
    /// queued on it one at a time, each holding a pooled connection, and token refreshes waited for
    /// connections behind them (THR-2). The price: attempts already past this read when the limit is
    /// reached are still checked, so the block's bound is its limit plus the sign-ins in flight (at
    /// most the hashing pool's threads and queue); the account's bounds stay exact.
    public func begin(email: String, ip: String?, stores: any Stores, now: Date) async throws -> LoginAttempt {
        let limits = [
            (Self.pairKey(email, ip: ip), policy.maxFailuresPerAccount), (Self.accountKey(email), policy.maxFailuresPerAccountTotal),
        ]
        let addressKey = ip.map(Self.ipKey)
        if let addressKey {
            let failures = try await stores.attempts.current(key: addressKey, now: now, window: policy.window)
            if failures.count >= policy.maxFailuresPerIP {
                throw GatehouseError.rateLimited(retryAfter: retryAfter(failures, now: now))
            }
        }
        let counts = try await stores.attempts.recordFailures(keys: limits.map(\.0), now: now, window: policy.window)
        for (key, limit) in limits {
            if let count = counts[key], count.count > limit {
                throw GatehouseError.rateLimited(retryAfter: retryAfter(count, now: now))
            }
        }
        return LoginAttempt(keys: limits.map(\.0), pairKey: limits[0].0, addressKey: addressKey)
    }

    /// The attempt failed (an unknown identifier or a wrong secret): its address block counts it. The
    /// account's counters counted it already in ``begin(email:ip:stores:now:)``.
    public func failed(_ attempt: LoginAttempt, stores: any Stores, now: Date) async throws {
        guard let addressKey = attempt.addressKey else { return }
        _ = try await stores.attempts.recordFailure(key: addressKey, now: now, window: policy.window)
    }

    /// The attempt succeeded: the pair starts over, and the account takes the attempt back (a success
    /// is not a failure).
    public func succeeded(_ attempt: LoginAttempt, stores: any Stores) async throws {
        // In ascending key order, as every use of the counters takes them: this runs at the end of
        // the sign-in's transaction, holding each row until it commits, while other sign-ins of the
        // account begin and give back (THR-1).
        for key in attempt.keys.sorted() {
            if key == attempt.pairKey {
                try await stores.attempts.reset(key: key)
            } else {
                try await stores.attempts.release(keys: [key])
            }
        }
    }

    /// The attempt was never checked (no capacity): the account's counters take it back.
    public func abandoned(_ attempt: LoginAttempt, stores: any Stores) async throws {
        try await stores.attempts.release(keys: attempt.keys)
    }

    /// Runs an attempt's check. One the server had no capacity for (503) was no attempt: its counts go
    /// back, in a transaction of their own, and the 503 goes on.
    public func givingBackWhenBusy<T: Sendable>(
        _ attempt: LoginAttempt?, persistence: any Persistence, _ check: () async throws -> T
    ) async throws -> T {
        do {
            return try await check()
        } catch let error as GatehouseError where error.code == .serverBusy {
            if let attempt { try? await persistence.transaction { try await self.abandoned(attempt, stores: $0) } }
            throw error
        }
    }

    /// After a password reset: the account's counters for everyone and this address start over.
    public func clear(email: String, ip: String?, stores: any Stores) async throws {
        for key in [Self.accountKey(email), Self.pairKey(email, ip: ip)].sorted() { try await stores.attempts.reset(key: key) }
    }

    private func retryAfter(_ count: AttemptCount, now: Date) -> Int {
        RateLimiter.secondsLeft(count, window: policy.window, now: now)
    }
}
