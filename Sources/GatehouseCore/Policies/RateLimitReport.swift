import Foundation
import Synchronization

/// What the limits counted for one request, for its `RateLimit-Policy` and `RateLimit` headers
/// (draft-ietf-httpapi-ratelimit-headers-10). The server binds one per request on the routes that count
/// rates; flows deep inside record into it without every signature carrying it.
public final class RateLimitReport: Sendable {
    public struct Entry: Sendable, Hashable {
        public var name: RateLimitName
        public var rule: RateLimit
        public var remaining: Int
        public var reset: Int
    }

    @TaskLocal public static var current: RateLimitReport?

    private let state = Mutex<[Entry]>([])

    public init() {}

    func record(_ name: RateLimitName, rule: RateLimit, remaining: Int, reset: Int) {
        state.withLock { entries in
            entries.removeAll { $0.name == name }
            entries.append(Entry(name: name, rule: rule, remaining: remaining, reset: reset))
        }
    }

    public var entries: [Entry] { state.withLock { $0 } }

    /// `"code_send";q=60;w=900, …`: the quotas that applied.
    public static func policyField(_ entries: [Entry]) -> String {
        entries.map { "\"\($0.name.rawValue)\";q=\($0.rule.limit);w=\(Int($0.rule.window))" }.joined(separator: ", ")
    }

    /// `"code_send";r=59;t=840, …`: what is left of each and when its window ends.
    public static func stateField(_ entries: [Entry]) -> String {
        entries.map { "\"\($0.name.rawValue)\";r=\($0.remaining);t=\($0.reset)" }.joined(separator: ", ")
    }
}
