import Foundation

/// A signed-in browser, as the session cookie proves it.
public struct BrowserPrincipal: Sendable {
    public var session: BrowserSessionRecord
    public var user: UserRecord

    public init(session: BrowserSessionRecord, user: UserRecord) {
        self.session = session
        self.user = user
    }
}

/// Browser sessions for the hosted pages (single sign-on): started when a browser signs in, found by
/// the hash of the cookie's random token, ended by logout.
public struct BrowserSessions: Sendable {
    let persistence: any Persistence
    let clock: any WallClock
    let lifetime: TimeInterval

    public init(persistence: any Persistence, clock: any WallClock, lifetime: TimeInterval) {
        self.persistence = persistence
        self.clock = clock
        self.lifetime = lifetime
    }

    public struct Started: Sendable {
        public var session: BrowserSessionRecord
        /// The cookie's value: shown to the browser once, only its hash is kept.
        public var cookieValue: String
    }

    /// Records a signed-in browser; call inside the flow's transaction.
    public func start(user: UserRecord, amr: [String], meta: RequestMeta, stores: any Stores) async throws -> Started {
        let now = clock.now()
        let token = Secrets.token(prefix: "gh_bs_")
        let session = BrowserSessionRecord(
            tokenHash: Secrets.sha256Hex(token), userID: user.id, amr: amr, authTime: now, userAgent: meta.userAgent,
            ipAddress: meta.ipAddress, createdAt: now, expiresAt: now.addingTimeInterval(lifetime))
        try await stores.browserSessions.insert(session)
        return Started(session: session, cookieValue: token)
    }

    /// The browser's principal; nil for an unknown, expired or ended session, or a disabled user.
    public func authenticate(cookieValue: String) async throws -> BrowserPrincipal? {
        guard cookieValue.hasPrefix("gh_bs_"), cookieValue.utf8.count <= 128 else { return nil }
        let hash = Secrets.sha256Hex(cookieValue)
        let now = clock.now()
        return try await persistence.read { stores -> BrowserPrincipal? in
            guard let session = try await stores.browserSessions.find(tokenHash: hash), session.isLive(at: now),
                let user = try await stores.users.find(id: session.userID), user.state == .active
            else { return nil }
            return BrowserPrincipal(session: session, user: user)
        }
    }

    /// Ends the browser session behind `cookieValue`; returns whether one was live.
    public func end(cookieValue: String) async throws -> Bool {
        let hash = Secrets.sha256Hex(cookieValue)
        let now = clock.now()
        return try await persistence.transaction { stores in
            guard let session = try await stores.browserSessions.find(tokenHash: hash) else { return false }
            return try await stores.browserSessions.revoke(id: session.id, at: now)
        }
    }
}
