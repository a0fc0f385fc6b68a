import Foundation

public enum ExpiredRows: String, Sendable, CaseIterable {
    /// Counters whose window ended.
    case attemptCounters = "attempt_counters"
    /// DPoP proof records past the time their proof could be accepted.
    case dpopProofs = "dpop_proofs"
    /// Device authorizations past their lifetime, approved or not.
    case deviceAuthorizations = "device_authorizations"
    /// Codes and links past their lifetime.
    case oneTimeCodes = "one_time_codes"
    /// Persisted flows (challenges, hosted-page visits) past their lifetime.
    case flows
    /// Refresh tokens past their expiry: presenting one can no longer reveal anything.
    case refreshTokens = "refresh_tokens"
    /// Sessions that ended (revoked or expired) long enough ago, with their tokens.
    case sessions
    case browserSessions = "browser_sessions"
    /// Delivered messages (they keep the recipient), and undeliverable ones past re-driving.
    case outbox
    /// Audit events past the retention.
    case auditEvents = "audit_events"
    /// Console links and sessions that expired or ended.
    case consoleSessions = "console_sessions"
    /// Anonymous accounts created before the cut-off whose sessions have all been idle since, with
    /// everything kept for them.
    case anonymousUsers = "anonymous_users"
}

/// Deletes old rows in small batches, so no clean-up holds the writer for long.
public protocol HousekeepingStore: Sendable {
    /// Deletes at most `limit` rows of `kind` older than `before` (per its own notion of age); returns
    /// how many went.
    func purge(_ kind: ExpiredRows, before: Date, limit: Int) async throws -> Int
}
