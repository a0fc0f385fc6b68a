import Foundation

/// The limits in force; a name without an entry is not limited.
public struct RateLimitPolicy: Sendable, Hashable {
    public var limits: [RateLimitName: RateLimit]

    public init(limits: [RateLimitName: RateLimit] = Self.defaultLimits) { self.limits = limits }

    /// Generous enough for a household or an office behind one address, tight enough that a script
    /// from one address cannot run up mail and SMS bills or guess codes at speed.
    public static let defaultLimits: [RateLimitName: RateLimit] = [
        .signup: RateLimit(30, per: 15 * 60),
        .identifierStatus: RateLimit(30, per: 60),
        .codeSend: RateLimit(60, per: 15 * 60),
        .codeVerify: RateLimit(120, per: 15 * 60),
        .token: RateLimit(1200, per: 60),
        .smsPerIP: RateLimit(10, per: 3600),
        .smsPerCountry: RateLimit(300, per: 3600),
        .smsTotal: RateLimit(1000, per: 3600),
        .admin: RateLimit(600, per: 60),
    ]

    public subscript(name: RateLimitName) -> RateLimit? {
        get { limits[name] }
        set { limits[name] = newValue }
    }

    /// Applies `name=COUNT/SECONDS` entries separated by commas; `name=off` lifts a limit and `*`
    /// names every limit (`*=100000/60,sms_total=500/3600`). Later entries win.
    public mutating func apply(_ spec: String) throws {
        for entry in spec.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw RateLimitSpecError(entry: entry) }
            let names: [RateLimitName]
            if parts[0] == "*" {
                names = RateLimitName.allCases
            } else if let name = RateLimitName(rawValue: parts[0]) {
                names = [name]
            } else {
                throw RateLimitSpecError(entry: entry)
            }
            if parts[1] == "off" {
                for name in names { limits[name] = nil }
                continue
            }
            let numbers = parts[1].split(separator: "/").map { Int($0) }
            guard numbers.count == 2, let count = numbers[0], let seconds = numbers[1], count > 0, seconds > 0 else {
                throw RateLimitSpecError(entry: entry)
            }
            for name in names { limits[name] = RateLimit(count, per: TimeInterval(seconds)) }
        }
    }

    /// The limits as `apply` reads them, for `serve --help` and start-up logs.
    public var description: String {
        RateLimitName.allCases.map { name in
            limits[name].map { "\(name.rawValue)=\($0.limit)/\(Int($0.window))" } ?? "\(name.rawValue)=off"
        }.joined(separator: ",")
    }
}

public struct RateLimitSpecError: Error, CustomStringConvertible {
    public let entry: String
    public var description: String {
        "Rate limit '\(entry)' is not NAME=COUNT/SECONDS or NAME=off; names: "
            + (["*"] + RateLimitName.allCases.map(\.rawValue)).joined(separator: ", ")
    }
}

/// Counts requests against the policy in the database, so every node shares the counts.
public struct RateLimiter: Sendable {
    public let policy: RateLimitPolicy

    public init(policy: RateLimitPolicy) { self.policy = policy }

    /// Counts this request, *then* compares (so at most `limit` of any burst, on any number of nodes,
    /// get through) and throws 429 past the limit. Inside the caller's transaction when it has one, so
    /// a request costs no extra commit; a refused request rolls its count back with the transaction.
    /// `report` is the request's (``RateLimitReport/current`` read *outside* the transaction: a batching
    /// writer may run this closure in another request's task).
    public func consume(_ name: RateLimitName, key: String, stores: any Stores, now: Date, report: RateLimitReport?) async throws {
        guard let rule = policy.limits[name] else { return }
        let count = try await stores.attempts.recordFailure(key: "rate:\(name.rawValue):\(key)", now: now, window: rule.window)
        let reset = Self.secondsLeft(count, window: rule.window, now: now)
        if name.isPerClient {
            report?.record(name, rule: rule, remaining: max(0, rule.limit - count.count), reset: reset)
        }
        if count.count > rule.limit { throw GatehouseError.rateLimited(retryAfter: reset) }
    }

    /// Per client address block; a request without an address shares one block rather than escape.
    public func consume(_ name: RateLimitName, ip: String?, stores: any Stores, now: Date, report: RateLimitReport?) async throws {
        try await consume(name, key: ip.map(AddressBlock.of) ?? "unknown", stores: stores, now: now, report: report)
    }

    /// In a transaction of its own, for routes that write nothing else before their first check.
    public func consume(_ name: RateLimitName, ip: String?, persistence: any Persistence, now: Date) async throws {
        try await consume(name, key: ip.map(AddressBlock.of) ?? "unknown", persistence: persistence, now: now)
    }

    /// The same for a count kept per `key` rather than per address block.
    public func consume(_ name: RateLimitName, key: String, persistence: any Persistence, now: Date) async throws {
        guard policy.limits[name] != nil else { return }
        let report = RateLimitReport.current
        try await persistence.transaction { stores in try await consume(name, key: key, stores: stores, now: now, report: report) }
    }

    /// Seconds until the window of `count` ends, for `Retry-After` (at least 1, at most the window).
    static func secondsLeft(_ count: AttemptCount, window: TimeInterval, now: Date) -> Int {
        let left = count.windowStart.addingTimeInterval(window).timeIntervalSince(now)
        // Stored times are whole milliseconds, so `left` can exceed the window by a hair.
        return min(Int(window.rounded(.up)), max(1, Int(left.rounded(.up))))
    }
}
