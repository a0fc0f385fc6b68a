import Foundation
import GatehouseAPI

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
    let notices: LogoutNotices

    public init(persistence: any Persistence, clock: any WallClock, lifetime: TimeInterval, notices: LogoutNotices) {
        self.persistence = persistence
        self.clock = clock
        self.lifetime = lifetime
        self.notices = notices
    }

    public struct Started: Sendable {
        public var session: BrowserSessionRecord
        /// The cookie's value: shown to the browser once, only its hash is kept.
        public var cookieValue: String
    }

    /// Records a signed-in browser; call inside the flow's transaction.
    /// `authTime`: when the user last proved who they are, if not now (a web session carries its app
    /// session's sign-in time, so `max_age` and `auth_time` stay true).
    func start(userID: UUID, amr: [String], authTime: Date? = nil, meta: RequestMeta, stores: any Stores) async throws -> Started {
        let now = clock.now()
        let token = Secrets.token(prefix: "gh_bs_")
        let session = BrowserSessionRecord(
            tokenHash: Secrets.sha256Hex(token), userID: userID, amr: amr, authTime: authTime ?? now, userAgent: meta.userAgent,
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

    /// A user signed in on a browser that may already have a session: the same user's session is
    /// renewed in place when the user just authenticated (so the app sessions it signed in stay tied to
    /// it), or kept as it is when an earlier sign-in stands in (`authTime`, a web session); another
    /// user's is ended and a new one begins. `cookieValue` is nil when the browser keeps its cookie.
    /// Only ``SessionStarter`` calls it.
    func signedIn(
        userID: UUID, amr: [String], authTime: Date?, current: BrowserSessionRecord?, meta: RequestMeta, stores: any Stores
    )
        async throws -> (session: BrowserSessionRecord, cookieValue: String?)
    {
        let now = clock.now()
        if let current, current.userID == userID {
            if authTime != nil { return (current, nil) }
            if try await stores.browserSessions.reauthenticated(id: current.id, amr: amr, at: now) {
                var renewed = current
                renewed.amr = amr
                renewed.authTime = now
                return (renewed, nil)
            }
        }
        if let current { _ = try await stores.browserSessions.revoke(id: current.id, at: now) }
        let started = try await start(userID: userID, amr: amr, authTime: authTime, meta: meta, stores: stores)
        return (started.session, started.cookieValue)
    }

    /// Whether the app session `sid` (an ID token's) was signed in by the browser session `browserSessionID`.
    public func signedIn(appSessionID sid: String, by browserSessionID: UUID) async throws -> Bool {
        guard let id = UUID(uuidString: sid) else { return false }
        return try await persistence.read { try await $0.sessions.find(id: id) }?.browserSessionID == browserSessionID
    }

    /// A browser session that ended, and the app sessions it had signed in (ended with it): the
    /// clients a front-channel logout page tells.
    public struct Ended: Sendable {
        public var session: BrowserSessionRecord
        public var signedIn: [SessionRecord]
    }

    /// Ends the browser session behind `cookieValue` and every app session it signed in (RP-initiated
    /// logout); returns them when the session was live.
    @discardableResult
    public func end(cookieValue: String) async throws -> Ended? {
        guard cookieValue.hasPrefix("gh_bs_"), cookieValue.utf8.count <= 128 else { return nil }
        let hash = Secrets.sha256Hex(cookieValue)
        let now = clock.now()
        return try await persistence.transaction { stores in
            guard let session = try await stores.browserSessions.find(tokenHash: hash),
                try await stores.browserSessions.revoke(id: session.id, at: now)
            else { return nil }
            // Every client the browser signed in to hears of it (back-channel logout), the one that
            // asked for the logout included.
            let signedIn = try await stores.sessions.listLive(userID: session.userID, now: now).filter { $0.browserSessionID == session.id }
            try await notices.enqueue(for: signedIn, stores: stores, now: now)
            _ = try await stores.sessions.revokeAll(browserSessionID: session.id, at: now, reason: .browserLogout)
            return Ended(session: session, signedIn: signedIn)
        }
    }
}
