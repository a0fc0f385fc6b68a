import Foundation

/// Limits on failed attempts, counted in the database so that every node shares them.
public struct ThrottlePolicy: Sendable, Hashable {
    /// Failures per account in one window before logins for it answer 429.
    public var maxFailuresPerAccount: Int
    /// Failures per client IP in one window (higher: many users can share one NAT).
    public var maxFailuresPerIP: Int
    public var window: TimeInterval

    public init(maxFailuresPerAccount: Int = 10, maxFailuresPerIP: Int = 50, window: TimeInterval = 15 * 60) {
        self.maxFailuresPerAccount = maxFailuresPerAccount
        self.maxFailuresPerIP = maxFailuresPerIP
        self.window = window
    }
}

/// Login throttling on top of the attempt store.
public struct LoginThrottle: Sendable {
    public let policy: ThrottlePolicy

    public init(policy: ThrottlePolicy) { self.policy = policy }

    static func accountKey(_ email: String) -> String { "login:account:" + Secrets.sha256Hex(email) }
    static func ipKey(_ ip: String) -> String { "login:ip:" + ip }

    /// Throws 429 when either counter is over its limit.
    public func check(email: String, ip: String?, stores: any Stores, now: Date) async throws {
        let account = try await stores.attempts.current(key: Self.accountKey(email), now: now, window: policy.window)
        if account.count >= policy.maxFailuresPerAccount {
            throw GatehouseError.rateLimited(retryAfter: retryAfter(account, now: now))
        }
        if let ip {
            let byIP = try await stores.attempts.current(key: Self.ipKey(ip), now: now, window: policy.window)
            if byIP.count >= policy.maxFailuresPerIP {
                throw GatehouseError.rateLimited(retryAfter: retryAfter(byIP, now: now))
            }
        }
    }

    public func recordFailure(email: String, ip: String?, stores: any Stores, now: Date) async throws {
        _ = try await stores.attempts.recordFailure(key: Self.accountKey(email), now: now, window: policy.window)
        if let ip {
            _ = try await stores.attempts.recordFailure(key: Self.ipKey(ip), now: now, window: policy.window)
        }
    }

    public func recordSuccess(email: String, stores: any Stores) async throws {
        try await stores.attempts.reset(key: Self.accountKey(email))
    }

    private func retryAfter(_ count: AttemptCount, now: Date) -> Int {
        Int((count.windowStart.addingTimeInterval(policy.window).timeIntervalSince(now)).rounded(.up))
    }
}
