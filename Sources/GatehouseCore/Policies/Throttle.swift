import Foundation

/// Limits on failed attempts, counted in the database so that every node shares them.
public struct ThrottlePolicy: Sendable, Hashable {
    /// Failures per account in one window before logins for it answer 429.
    public var maxFailuresPerAccount: Int
    /// Failures per client IP in one window (higher: many users can share one NAT).
    public var maxFailuresPerIP: Int
    public var window: TimeInterval

    /// Sign-ups per client IP in one window: each costs a password hash and may send a mail.
    public var maxSignupsPerIP: Int

    public init(
        maxFailuresPerAccount: Int = 10, maxFailuresPerIP: Int = 50, window: TimeInterval = 15 * 60,
        maxSignupsPerIP: Int = 30
    ) {
        self.maxFailuresPerAccount = maxFailuresPerAccount
        self.maxFailuresPerIP = maxFailuresPerIP
        self.window = window
        self.maxSignupsPerIP = maxSignupsPerIP
    }
}

/// Login throttling on top of the attempt store.
public struct LoginThrottle: Sendable {
    public let policy: ThrottlePolicy

    public init(policy: ThrottlePolicy) { self.policy = policy }

    static func accountKey(_ email: String) -> String { "login:account:" + Secrets.sha256Hex(email) }
    static func ipKey(_ ip: String) -> String { "login:ip:" + addressBlock(ip) }

    /// IPv6 clients usually own a whole /64: counting per address would give each of them 2^64 tries.
    static func addressBlock(_ ip: String) -> String {
        // An IPv4 client of a dual-stack listener shows up as ::ffff:a.b.c.d: count it as IPv4.
        if ip.lowercased().hasPrefix("::ffff:"), ip.contains(".") { return String(ip.dropFirst(7)) }
        guard ip.contains(":") else { return ip }
        var groups = ip.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if let gap = groups.firstIndex(of: ""), groups.count < 8 {
            // Expand "::" so that the first four groups are the real /64 prefix.
            let missing = 8 - groups.filter { !$0.isEmpty }.count
            groups = Array(groups[..<gap]).filter { !$0.isEmpty } + Array(repeating: "0", count: missing)
                + Array(groups[(gap + 1)...]).filter { !$0.isEmpty }
        }
        return groups.prefix(4).map { $0.lowercased() }.joined(separator: ":") + "::/64"
    }

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

    /// Counts a sign-up attempt from `ip`; throws 429 past the limit.
    public func countSignup(ip: String?, stores: any Stores, now: Date) async throws {
        guard let ip else { return }
        let count = try await stores.attempts.recordFailure(key: "signup:ip:" + Self.addressBlock(ip), now: now, window: policy.window)
        if count.count > policy.maxSignupsPerIP {
            throw GatehouseError.rateLimited(retryAfter: retryAfter(count, now: now))
        }
    }

    private func retryAfter(_ count: AttemptCount, now: Date) -> Int {
        let left = count.windowStart.addingTimeInterval(policy.window).timeIntervalSince(now)
        // Stored times are whole milliseconds, so `left` can exceed the window by a hair.
        return min(Int(policy.window.rounded(.up)), max(1, Int(left.rounded(.up))))
    }
}
