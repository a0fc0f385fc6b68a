import Foundation

/// At most `limit` requests in a fixed window of `window` seconds that starts at the first one.
public struct RateLimit: Sendable, Hashable {
    public var limit: Int
    public var window: TimeInterval

    public init(_ limit: Int, per window: TimeInterval) {
        self.limit = max(1, limit)
        self.window = max(1, window)
    }
}

/// Every request-rate limit the server applies. Each counts per client address block (an IPv4
/// address, an IPv6 /64) unless its name says otherwise. Failed sign-ins have their own, finer
/// throttle (``LoginThrottle``) and per-identifier send limits live in ``SendCooldown``.
public enum RateLimitName: String, Sendable, CaseIterable, Comparable {
    case signup
    case identifierStatus = "identifier_status"
    /// Sending a code or link by mail or SMS: one-time codes, recovery, verification resends.
    case codeSend = "code_send"
    /// Checking a typed code (sign-in, verification, recovery): the guessable secrets.
    case codeVerify = "code_verify"
    /// `POST /oauth/token` with an authorization code (before the code is spent). Refresh, client
    /// credentials and device challenges are not counted: each needs a 122-bit or longer secret or id
    /// first, so there is nothing to guess, and the count would cost more than the request (threat
    /// model A1, A2).
    case token
    /// Text messages per address block, per country calling code, and for the whole server: SMS
    /// pumping costs the operator money whoever the recipient is.
    case smsPerIP = "sms_ip"
    case smsPerCountry = "sms_country"
    case smsTotal = "sms_total"
    /// Admin API and console requests, per credential (the admin client's id, or the console
    /// operator), and the console's sign-in link per address block: a leaked or runaway admin
    /// credential cannot hammer the database, and a flood of link tries is cut short.
    case admin

    /// Whether the caller's own budget is meant: only those are told in `RateLimit` headers (the
    /// server-wide counts are nobody's business).
    public var isPerClient: Bool { self != .smsPerCountry && self != .smsTotal }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
