import Foundation

/// Send cool-downs: one message per binding per interval, counted in the database.
struct SendCooldown: Sendable {
    let services: CoreServices

    /// Throws 429 when a message for `key` went out less than `interval` ago, or when `key` had its
    /// hourly share of messages (which also bounds guesses: 5 per code); otherwise records this one.
    func claim(_ key: String, interval: TimeInterval) async throws {
        let now = services.clock.now()
        let hash = Secrets.sha256Hex(key)
        let recent = try await services.persistence.transaction { stores in
            try await stores.attempts.recordFailure(key: "cooldown:" + hash, now: now, window: interval)
        }
        if recent.count > 1 {
            throw GatehouseError.rateLimited(retryAfter: RateLimiter.secondsLeft(recent, window: interval, now: now))
        }
        // Only sends past the cool-down count towards the hour.
        let hourly = try await services.persistence.transaction { stores in
            try await stores.attempts.recordFailure(key: "hourly:" + hash, now: now, window: 3600)
        }
        if hourly.count > services.settings.otpSendsPerHour {
            throw GatehouseError.rateLimited(retryAfter: RateLimiter.secondsLeft(hourly, window: 3600, now: now))
        }
    }
}
